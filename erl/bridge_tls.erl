%% bridge_tls: TLS handshakes for the tls scenario kind, the client side,
%% and the options of both sides.
%%
%% The server is another Erlang node of the same release and libcrypto
%% (bridge_tls_server), so that its CPU can be measured apart from the
%% client's. Each cell opens a listener there on 127.0.0.1 and an ephemeral
%% port, closed when the cell's request process ends. The timed call is
%% ssl:connect (verify_peer against bridge's CA, with SNI) followed by
%% ssl:close; a resumed call offers the session of a full handshake made
%% when the cell is prepared (a TLS 1.3 ticket, a TLS 1.2 session ID), the
%% same on every call. Both sides offer one protocol version, one cipher
%% suite, one group and one signature scheme per key type, so what they
%% negotiate is every runtime's; in TLS 1.2 both sides also have P-256 after
%% the group, which an ECDSA certificate's curve needs there.
%%
%% Where the two nodes run while a cell measures: the driver pins this node
%% to the round's CPU and the server node to the other CPUs bridge may use
%% (bridge/runtimes/pinning.py), and says how many each has (client_cpus,
%% server_cpus; 0 or absent: as started, as at --concurrency levels). Each
%% node then runs as many schedulers online as erl started on those CPUs
%% would (`taskset -c 0 erl` on two CPUs starts 2 schedulers, 1 online):
%% two schedulers of one node on one CPU take it in turns, one of them
%% spinning while the other has the handshake's work. This node's go back
%% when the cell's measurement ends; the server node's are set anew by
%% every listener.
%%
%% The output (bridge/catalog/negotiated.py) gives what ssl can tell: the
%% protocol, the suite, the server's certificate, whether the session was
%% resumed, and the client's certificate as the server saw it. ssl names
%% neither the group nor the signature scheme, so those are left out.
%%
%% ssl is an application of its own (Debian: erlang-ssl), which a minimal
%% install lacks: its modules are called through variables, so that
%% dialyzer with a PLT without ssl stays quiet, and prepare/1 says
%% `unsupported` when it is missing.
-module(bridge_tls).

-export([prepare/1, server_meter/0, server_opts/1, client_opts/1, start_ssl/0]).
-export([measuring/1, online/1, fingerprint/1]).
-export_type([spec/0]).

-define(TIMEOUT, 10000).
-define(LOOPBACK, {127, 0, 0, 1}).
%% The server's CPU meter of the cell this process prepared (bench reads it).
-define(METER, bridge_tls_meter).
%% The CPUs the client has while that cell measures (measuring/1).
-define(CLIENT_CPUS, bridge_tls_client_cpus).
%% How long a full handshake's TLS 1.3 ticket may take to arrive.
-define(TICKET_WAIT, 5000).
-define(FINGERPRINT_HEX, 16).

-type version() :: 'tlsv1.3' | 'tlsv1.2'.
%% A cell, as bridge_ops reads it from the request: binaries as sent.
-type spec() :: #{version := version(), resumed := boolean(), group := binary(),
                  cert_type := binary(), client_auth := boolean(), resumption := boolean(),
                  cert := binary(), key := binary(), ca := binary(),
                  client_cert => binary(), client_key => binary(), client_ca => binary(),
                  client_cpus => non_neg_integer(), server_cpus => non_neg_integer()}.

-spec prepare(spec()) ->
          {ok, tls_connect | tls_resume, bridge_loops:timed_call()} | bridge_ops:error_reply().
prepare(#{group := G, cert_type := C} = Spec) ->
    case {group(G), cert(C)} of
        {error, _} -> {error, {bad_request, <<"unknown TLS group">>}};
        {_, error} -> {error, {bad_request, <<"unknown certificate type">>}};
        _ ->
            case start_ssl() of
                ok -> serve(Spec);
                {error, _} = E -> E
            end
    end.

%% The server's CPU ns so far, for the cell this process prepared last
%% (bridge_tls_server:meter/1); none outside a TLS cell.
-spec server_meter() -> fun(() -> integer()) | none.
server_meter() ->
    case get(?METER) of
        undefined -> none;
        Meter -> Meter
    end.

%% Fun's result, run with this node's schedulers online as erl started on
%% the client's CPUs of the cell this process prepared would have them, then
%% as they were (dirty CPU schedulers follow, in proportion).
-spec measuring(fun(() -> T)) -> T.
measuring(Fun) ->
    case get(?CLIENT_CPUS) of
        N when is_integer(N), N > 0 ->
            Was = erlang:system_flag(schedulers_online, online(N)),
            try Fun() after erlang:system_flag(schedulers_online, Was) end;
        _ ->
            Fun()
    end.

%% The schedulers online of a node on N CPUs: N, at most the node's
%% schedulers; 0: all of them.
-spec online(non_neg_integer()) -> pos_integer().
online(0) -> erlang:system_info(schedulers);
online(N) -> min(N, erlang:system_info(schedulers)).

-spec start_ssl() -> ok | bridge_ops:error_reply().
start_ssl() ->
    App = application_mod(),
    case code:ensure_loaded(ssl_mod()) of
        {module, _} ->
            case App:ensure_all_started(ssl) of
                {ok, _} -> ok;
                {error, Reason} ->
                    {error, {unsupported, bridge_args:format("the ssl application does not start: ~0p", [Reason])}}
            end;
        _ ->
            {error, {unsupported, missing(<<"the ssl application is not installed (Debian: erlang-ssl)">>)}}
    end.

missing(What) ->
    <<What/binary, "; this node is OTP ", (list_to_binary(erlang:system_info(otp_release)))/binary>>.

serve(#{resumed := Resumed} = Spec) ->
    case bridge_tls_server:listen(Spec) of
        {ok, Port, Meter} ->
            put(?METER, Meter),
            put(?CLIENT_CPUS, maps:get(client_cpus, Spec, 0)),
            SSL = ssl_mod(),
            Opts = client_opts(Spec),
            case Resumed of
                false ->
                    {ok, tls_connect, calls(SSL, Port, Opts, none)};
                true ->
                    case session(SSL, Port, Opts, maps:get(version, Spec)) of
                        {ok, Offer} -> {ok, tls_resume, calls(SSL, Port, Opts, Offer)};
                        {error, _} = E -> E
                    end
            end;
        {error, _} = E ->
            E
    end.

calls(SSL, Port, Opts0, Offer) ->
    Opts = offered(Offer) ++ Opts0,
    {fun() -> once(SSL, Port, Opts, Offer) end,
     fun(N) -> connect_loop(N, SSL, Port, Opts) end}.

%% What a resumed call offers: the TLS 1.3 ticket, or the TLS 1.2 session.
offered(none) -> [];
offered({ticket, Ticket, _}) -> [{use_ticket, [Ticket]}];
offered({session, Id, Data, _}) -> [{reuse_session, {Id, Data}}].

%% A full handshake, and the session it leaves: a TLS 1.3 client in manual
%% ticket mode gets its ticket as a message; a TLS 1.2 session is read back.
%% With it, the server's certificate of that handshake: ssl gives none for a
%% TLS 1.3 connection that resumed (the ticket does not carry it), and the
%% session's is the certificate a resumed handshake relies on.
session(SSL, Port, Opts, 'tlsv1.3') ->
    {ok, S} = connect(SSL, Port, Opts),
    Peer = peer(SSL, S),
    Got = receive {ssl, session_ticket, Ticket} -> {ok, {ticket, Ticket, Peer}}
          after ?TICKET_WAIT -> {error, {failed, <<"the full handshake left no TLS 1.3 ticket">>}}
          end,
    _ = SSL:close(S),
    Got;
session(SSL, Port, Opts, 'tlsv1.2') ->
    {ok, S} = connect(SSL, Port, Opts),
    {ok, Info} = SSL:connection_information(S, [session_id, session_data]),
    Peer = peer(SSL, S),
    _ = SSL:close(S),
    {ok, {session, proplists:get_value(session_id, Info), proplists:get_value(session_data, Info),
          Peer}}.

peer(SSL, S) ->
    case SSL:peercert(S) of
        {ok, Der} -> fingerprint(Der);
        _ -> <<"none">>
    end.

%% -- options ------------------------------------------------------------------

-spec server_opts(spec()) -> [term()].
server_opts(#{version := V, cert := Cert, key := Key} = Spec) ->
    [{ip, ?LOOPBACK}, {reuseaddr, true}, {certfile, binary_to_list(Cert)},
     {keyfile, binary_to_list(Key)} | server_order(V)
     ++ server_sessions(Spec) ++ client_auth(Spec) ++ common(Spec)].

-spec client_opts(spec()) -> [term()].
client_opts(#{ca := CA} = Spec) ->
    [{verify, verify_peer}, {cacertfile, binary_to_list(CA)},
     {server_name_indication, "localhost"} | client_sessions(Spec)
     ++ own_cert(Spec) ++ common(Spec)].

common(#{version := V, group := G, cert_type := C}) ->
    {ok, Group} = group(G),
    {ok, Kx} = cert(C),
    [{versions, [V]}, {ciphers, [suite(V, Kx)]}, {active, false},
     groups(V, client_groups(V, Group)) | signatures(V)].

%% TLS 1.3 tickets (stateless, as OpenSSL's and Python's servers issue them)
%% in a scenario that resumes, none otherwise; a TLS 1.2 server keeps its
%% sessions by ID, as the others' do (ssl has no TLS 1.2 tickets).
server_sessions(#{resumption := true, version := 'tlsv1.3'}) -> [{session_tickets, stateless}];
server_sessions(_) -> [].

%% A TLS 1.3 client in manual ticket mode asks for tickets (psk_ke modes),
%% as OpenSSL's clients do, and gets them as messages; a TLS 1.2 client keeps
%% no session cache of its own: a resumed call names its session.
client_sessions(#{resumption := true, version := 'tlsv1.3'}) -> [{session_tickets, manual}];
client_sessions(#{version := 'tlsv1.3'}) -> [];
client_sessions(#{version := 'tlsv1.2'}) -> [{reuse_sessions, false}].

client_auth(#{client_auth := true, client_ca := CA}) ->
    [{verify, verify_peer}, {fail_if_no_peer_cert, true}, {cacertfile, binary_to_list(CA)}];
client_auth(_) ->
    [].

own_cert(#{client_auth := true, client_cert := Cert, client_key := Key}) ->
    [{certfile, binary_to_list(Cert)}, {keyfile, binary_to_list(Key)}];
own_cert(_) ->
    [].

%% A TLS 1.2 server needs the certificate's curve among its own curves: it
%% has P-256 after the group, and chooses in its own order.
server_order('tlsv1.3') -> [];
server_order('tlsv1.2') -> [{honor_ecc_order, true}].

%% TLS 1.3 groups are supported_groups; TLS 1.2's curves are eccs.
groups('tlsv1.3', Gs) -> {supported_groups, Gs};
groups('tlsv1.2', Gs) -> {eccs, Gs}.

client_groups('tlsv1.2', x25519) -> [x25519, secp256r1];
client_groups(_, G) -> [G].

%% One scheme per key type, the one every runtime signs with: an ECDSA P-256
%% key can make only the first, an RSA key (rsaEncryption) only the second
%% (RSA-PSS, as OpenSSL chooses); in TLS 1.2 ssl names ECDSA by {Hash, Sign},
%% and a server picks in the client's order, PSS first. The certificates'
%% own signatures (an RSA CA signs with PKCS#1 v1.5) are
%% signature_algs_cert's in TLS 1.3, and in 1.2 need {sha256, rsa} listed.
signatures('tlsv1.3') ->
    [{signature_algs, [ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256]},
     {signature_algs_cert, [ecdsa_secp256r1_sha256, rsa_pkcs1_sha256]}];
signatures('tlsv1.2') ->
    [{signature_algs, [{sha256, ecdsa}, rsa_pss_rsae_sha256, {sha256, rsa}]}].

suite('tlsv1.3', _) -> #{key_exchange => any, cipher => aes_256_gcm, mac => aead, prf => sha384};
suite('tlsv1.2', Kx) -> #{key_exchange => Kx, cipher => aes_256_gcm, mac => aead, prf => sha384}.

group(<<"x25519">>) -> {ok, x25519};
group(<<"p256">>) -> {ok, secp256r1};
group(_) -> error.

%% The certificate type's TLS 1.2 key exchange.
cert(<<"ecdsa-p256">>) -> {ok, ecdhe_ecdsa};
cert(<<"rsa2048">>) -> {ok, ecdhe_rsa};
cert(_) -> error.

%% -- the calls ----------------------------------------------------------------

%% The probe: what the handshake negotiated, as ssl can tell it.
once(SSL, Port, Opts, Offer) ->
    bridge_tls_server:observe(),
    {ok, S} = connect(SSL, Port, Opts),
    {ok, Info} = SSL:connection_information(S, [protocol, selected_cipher_suite, session_id]),
    Peer = case {peer(SSL, S), Offer} of
               {<<"none">>, {ticket, _, Session}} -> Session;
               {Seen, _} -> Seen
           end,
    ok = SSL:close(S),
    flush(),
    Theirs = bridge_tls_server:observed(),
    Protocol = proplists:get_value(protocol, Info),
    Suite = SSL:suite_to_openssl_str(proplists:get_value(selected_cipher_suite, Info)),
    iolist_to_binary(["protocol=", protocol_name(Protocol), " suite=", Suite,
                      " cert=", Peer, " resumed=", resumed(Offer, Info),
                      " client_cert=", Theirs]).

%% ssl's session_resumption says true for a resumed TLS 1.3 handshake; in
%% TLS 1.2 it says false for a resumed one too (until OTP 28.3), so there a
%% session is resumed when the server kept the ID offered.
resumed(none, _) -> <<"no">>;
resumed({ticket, _, _}, _) -> <<"yes">>;
resumed({session, Id, _, _}, Info) ->
    case proplists:get_value(session_id, Info) of
        Id -> <<"yes">>;
        _ -> <<"no">>
    end.

%% The first hex digits of a certificate's SHA-256 (bridge/catalog/negotiated.py).
-spec fingerprint(binary()) -> binary().
fingerprint(Der) ->
    <<Head:(?FINGERPRINT_HEX div 2)/binary, _/binary>> = crypto:hash(sha256, Der),
    << <<(hex(N))>> || <<N:4>> <= Head >>.

hex(N) when N < 10 -> $0 + N;
hex(N) -> $a + N - 10.

protocol_name('tlsv1.3') -> "TLSv1.3";
protocol_name('tlsv1.2') -> "TLSv1.2";
protocol_name(Other) -> atom_to_list(Other).

connect(SSL, Port, Opts) ->
    case SSL:connect(?LOOPBACK, Port, Opts, ?TIMEOUT) of
        {ok, S} -> {ok, S};
        {error, Reason} -> error({bridge_user, bridge_args:format("ssl:connect: ~0p", [Reason])})
    end.

connect_loop(0, _, _, _) -> flush();
connect_loop(N, SSL, Port, Opts) ->
    {ok, S} = connect(SSL, Port, Opts),
    _ = SSL:close(S),
    flush(),
    connect_loop(N - 1, SSL, Port, Opts).

%% A server that issues tickets sends one after each handshake; a client in
%% manual mode gets it as a message, which no call here needs.
flush() ->
    receive
        {ssl, session_ticket, _} -> flush()
    after 0 -> ok
    end.

ssl_mod() -> ssl.

application_mod() -> application.
