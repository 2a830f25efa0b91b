%% bridge_tls: full TLS handshakes for the tls scenario kind, client and
%% server in this node.
%%
%% Each cell opens a listener on 127.0.0.1 and an ephemeral port (nothing
%% else ever listens), served by an acceptor process: transport_accept, then
%% handshake + close in a process per connection. The timed
%% call is ssl:connect (verify_peer against bridge's certificate, with SNI)
%% followed by ssl:close. The listener belongs to the request's process
%% (bridge_worker runs each request in one): it is closed when the cell ends,
%% and with the node. Both sides offer one protocol version, one cipher suite
%% and one group, so the negotiated protocol and suite are every runtime's;
%% in TLS 1.2 both sides also have P-256 after the group, which the ECDSA
%% certificate's curve needs there. No session reuse, no tickets.
%%
%% ssl is an application of its own (Debian: erlang-ssl), which a minimal
%% install lacks: its modules are called through variables, so that
%% dialyzer with a PLT without ssl stays quiet, and prepare/5 says
%% `unsupported` when it is missing.
-module(bridge_tls).

-export([prepare/5]).

-define(TIMEOUT, 10000).
-define(LOOPBACK, {127, 0, 0, 1}).

-type version() :: 'tlsv1.3' | 'tlsv1.2'.

-spec prepare(version(), binary(), binary(), binary(), binary()) ->
          {ok, tls_connect, bridge_loops:timed_call()} | bridge_ops:error_reply().
prepare(Version, Group, Cert, Key, CA) ->
    case group(Group) of
        error ->
            {error, {bad_request, <<"unknown TLS group">>}};
        {ok, G} ->
            case start_ssl() of
                ok -> listen(Version, G, {binary_to_list(Cert), binary_to_list(Key)},
                             binary_to_list(CA));
                {error, _} = E -> E
            end
    end.

group(<<"x25519">>) -> {ok, x25519};
group(<<"p256">>) -> {ok, secp256r1};
group(_) -> error.

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

listen(Version, G, {Cert, Key}, CA) ->
    SSL = ssl_mod(),
    Common = [{versions, [Version]}, {ciphers, [suite(Version)]}, {active, false}
              | no_reuse(Version)],
    ServerOpts = [{ip, ?LOOPBACK}, {reuseaddr, true}, {certfile, Cert}, {keyfile, Key},
                  groups(Version, client_groups(Version, G)) | server_order(Version) ++ Common],
    ClientOpts = [{verify, verify_peer}, {cacertfile, CA},
                  {server_name_indication, "localhost"},
                  groups(Version, client_groups(Version, G)) | Common],
    case SSL:listen(0, ServerOpts) of
        {ok, LSock} ->
            {ok, {_, Port}} = SSL:sockname(LSock),
            Owner = self(),
            _ = spawn(fun() -> acceptor(SSL, LSock, Owner) end),
            {ok, tls_connect, {fun() -> once(SSL, Port, ClientOpts) end,
                               fun(N) -> connect_loop(N, SSL, Port, ClientOpts) end}};
        {error, Reason} ->
            {error, {failed, bridge_args:format("ssl:listen on 127.0.0.1: ~0p", [Reason])}}
    end.

%% TLS 1.3 has no session IDs to reuse (and tickets are off by default);
%% TLS 1.2 clients reuse sessions unless told not to.
no_reuse('tlsv1.3') -> [];
no_reuse('tlsv1.2') -> [{reuse_sessions, false}].

%% A TLS 1.2 server needs the certificate's curve among its own curves: it
%% has P-256 after the group, and chooses in its own order.
server_order('tlsv1.3') -> [];
server_order('tlsv1.2') -> [{honor_ecc_order, true}].

%% TLS 1.3 groups are supported_groups; TLS 1.2's curves are eccs.
groups('tlsv1.3', Gs) -> {supported_groups, Gs};
groups('tlsv1.2', Gs) -> {eccs, Gs}.

client_groups('tlsv1.2', x25519) -> [x25519, secp256r1];
client_groups(_, G) -> [G].

suite('tlsv1.3') -> #{key_exchange => any, cipher => aes_256_gcm, mac => aead, prf => sha384};
suite('tlsv1.2') -> #{key_exchange => ecdhe_ecdsa, cipher => aes_256_gcm, mac => aead, prf => sha384}.

%% Each connection is served by a process of its own (as servers do), so
%% that N clients at once (--concurrency) do not queue behind one server
%% handshake; the acceptor goes when the listener is closed (its owner, the
%% request's process, has ended) or the owner is gone.
acceptor(SSL, LSock, Owner) ->
    case SSL:transport_accept(LSock, ?TIMEOUT) of
        {ok, T} ->
            Pid = spawn(fun() -> receive {serve, T} -> serve(SSL, T) after ?TIMEOUT -> ok end end),
            _ = case SSL:controlling_process(T, Pid) of
                    ok -> Pid ! {serve, T};
                    {error, _} -> _ = SSL:close(T), exit(Pid, kill)
                end,
            acceptor(SSL, LSock, Owner);
        {error, timeout} ->
            case is_process_alive(Owner) of
                true -> acceptor(SSL, LSock, Owner);
                false -> SSL:close(LSock)
            end;
        {error, _} ->
            ok
    end.

serve(SSL, T) ->
    case SSL:handshake(T, ?TIMEOUT) of
        {ok, S} -> _ = SSL:close(S);
        _ -> _ = SSL:close(T)
    end,
    ok.

%% The probe: protocol and suite as OpenSSL names them ("TLSv1.3 TLS_AES_256_GCM_SHA384").
once(SSL, Port, Opts) ->
    {ok, S} = connect(SSL, Port, Opts),
    {ok, Info} = SSL:connection_information(S, [protocol, selected_cipher_suite]),
    ok = SSL:close(S),
    Protocol = proplists:get_value(protocol, Info),
    Suite = SSL:suite_to_openssl_str(proplists:get_value(selected_cipher_suite, Info)),
    iolist_to_binary([protocol_name(Protocol), " ", Suite]).

protocol_name('tlsv1.3') -> "TLSv1.3";
protocol_name('tlsv1.2') -> "TLSv1.2";
protocol_name(Other) -> atom_to_list(Other).

connect(SSL, Port, Opts) ->
    case SSL:connect(?LOOPBACK, Port, Opts, ?TIMEOUT) of
        {ok, S} -> {ok, S};
        {error, Reason} -> error({bridge_user, bridge_args:format("ssl:connect: ~0p", [Reason])})
    end.

connect_loop(0, _, _, _) -> ok;
connect_loop(N, SSL, Port, Opts) ->
    {ok, S} = connect(SSL, Port, Opts),
    _ = SSL:close(S),
    connect_loop(N - 1, SSL, Port, Opts).

ssl_mod() -> ssl.

application_mod() -> application.
