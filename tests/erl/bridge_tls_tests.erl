-module(bridge_tls_tests).

-include_lib("eunit/include/eunit.hrl").

unknown_group_and_certificate_type_test_() ->
    Spec = #{version => 'tlsv1.3', resumed => false, group => <<"p384">>,
             cert_type => <<"ecdsa-p256">>, client_auth => false, resumption => false,
             cert => <<"c">>, key => <<"k">>, ca => <<"ca">>},
    [?_assertEqual({error, {bad_request, <<"unknown TLS group">>}}, bridge_tls:prepare(Spec)),
     ?_assertEqual({error, {bad_request, <<"unknown certificate type">>}},
                   bridge_tls:prepare(Spec#{group => <<"x25519">>, cert_type => <<"dsa">>}))].

fingerprint_test() ->
    %% The first 16 hex digits of the SHA-256, as bridge/catalog/negotiated.py gives them.
    ?assertEqual(<<"e3b0c44298fc1c14">>, bridge_tls:fingerprint(<<>>)).

%% Real handshakes against a real server node, with certificates made as
%% bridge.system.tlscert makes them (skipped without openssl or ssl): TLS
%% 1.3 and 1.2, full and resumed, with and without a client certificate.
handshake_test_() ->
    case {os:find_executable("openssl"), code:which(ssl)} of
        {false, _} -> [];
        {_, non_existing} -> [];
        _ -> {timeout, 90, fun handshakes/0}
    end.

handshakes() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    ?assertEqual("made", string:trim(os:cmd(certificates(Dir)))),
    F = fun(Name) -> list_to_binary(filename:join(Dir, Name)) end,
    Base = #{group => <<"x25519">>, cert_type => <<"ecdsa-p256">>,
             cert => F("cert.pem"), key => F("key.pem"), ca => F("ca.pem"),
             client_cert => F("client.pem"), client_key => F("client-key.pem"),
             client_ca => F("ca.pem")},
    Server = fingerprint(filename:join(Dir, "cert.pem")),
    Client = fingerprint(filename:join(Dir, "client.pem")),
    try
        [check(Base#{version => V, resumed => R, client_auth => M, resumption => true},
               {Server, Client})
         || V <- ['tlsv1.3', 'tlsv1.2'], R <- [false, true], M <- [false, true]]
    after
        os:cmd("rm -rf " ++ Dir)
    end.

%% In a process of its own, as bridge_worker runs each request: the
%% listener goes with it.
check(#{version := V, resumed := R, client_auth := M} = Spec, {Server, Client}) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() ->
        {ok, Api, {Once, Loop}} = bridge_tls:prepare(Spec),
        Out = Once(),
        Meter = bridge_tls:server_meter(),
        Before = Meter(),
        ok = Loop(3),
        Self ! {done, Api, Out, Meter() - Before}
    end),
    receive
        {done, Api, Out, Spent} ->
            ?assertEqual(case R of true -> tls_resume; false -> tls_connect end, Api),
            Want = iolist_to_binary(
                     ["protocol=", case V of 'tlsv1.3' -> "TLSv1.3"; _ -> "TLSv1.2" end,
                      " suite=", case V of 'tlsv1.3' -> "TLS_AES_256_GCM_SHA384";
                                           _ -> "ECDHE-ECDSA-AES256-GCM-SHA384" end,
                      " cert=", Server, " resumed=", case R of true -> "yes"; false -> "no" end,
                      " client_cert=", client(V, R, M, Client)]),
            ?assertEqual({V, R, M, Want}, {V, R, M, Out}),  % the case names a failure
            %% The server node worked for those handshakes, on its own threads.
            ?assert(Spent > 0)
    after 60000 ->
        ?assert(false)
    end,
    receive {'DOWN', Ref, process, Pid, Reason} -> ?assertEqual(normal, Reason) end.

%% A cell that the driver placed (client_cpus, server_cpus: the client node
%% pinned to one CPU, the server node to the others) measures with one
%% scheduler online in this node, as erl started on one CPU would have it,
%% not two taking that CPU in turns, one spinning; then as it was, if the
%% measurement fails too. Its handshakes go on working.
measuring_test_() ->
    case {os:find_executable("openssl"), code:which(ssl)} of
        {false, _} -> [];
        {_, non_existing} -> [];
        _ -> {timeout, 60, fun measuring/0}
    end.

measuring() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    ?assertEqual("made", string:trim(os:cmd(certificates(Dir)))),
    F = fun(Name) -> list_to_binary(filename:join(Dir, Name)) end,
    Spec = #{version => 'tlsv1.3', resumed => false, group => <<"x25519">>,
             cert_type => <<"ecdsa-p256">>, client_auth => false, resumption => false,
             cert => F("cert.pem"), key => F("key.pem"), ca => F("ca.pem"),
             client_cpus => 1, server_cpus => 1},
    Was = erlang:system_info(schedulers_online),
    Self = self(),
    try
        {Pid, Ref} = spawn_monitor(fun() ->
            {ok, tls_connect, {_Once, Loop}} = bridge_tls:prepare(Spec),
            During = bridge_tls:measuring(fun() ->
                ok = Loop(2),
                erlang:system_info(schedulers_online)
            end),
            Failed = catch bridge_tls:measuring(fun() -> throw(failed) end),
            Self ! {done, During, Failed, erlang:system_info(schedulers_online)}
        end),
        receive
            {done, During, Failed, After} ->
                ?assertEqual({1, failed, Was}, {During, Failed, After})
        after 50000 ->
            ?assert(false)
        end,
        receive {'DOWN', Ref, process, Pid, Reason} -> ?assertEqual(normal, Reason) end
    after
        os:cmd("rm -rf " ++ Dir)
    end.

%% Schedulers online for N CPUs: N, at most the node's; 0 (not placed): all.
online_test() ->
    S = erlang:system_info(schedulers),
    ?assertEqual({S, 1, S}, {bridge_tls:online(0), bridge_tls:online(1), bridge_tls:online(S + 1)}).

%% ssl's server (OTP 25) has no client certificate after it resumed a TLS
%% 1.3 session from a stateless ticket (ssl:peercert/1 says no_peercert),
%% where OpenSSL keeps the session's: bridge's check then names Erlang's row.
client('tlsv1.3', true, true, _) -> "none";
client(_, _, true, Client) -> Client;
client(_, _, false, _) -> "none".

-spec fingerprint(file:filename()) -> binary().
fingerprint(Path) ->
    {ok, Pem} = file:read_file(Path),
    [{'Certificate', Der, _}] = public_key:pem_decode(Pem),
    bridge_tls:fingerprint(Der).

certificates(Dir) ->
    P256 = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1",
    "cd " ++ Dir ++ " && printf 'subjectAltName=DNS:localhost\\n' > ext.cnf"
    " && printf 'extendedKeyUsage=clientAuth\\n' > client.cnf"
    " && openssl req -x509" ++ P256 ++ " -subj /CN=ca -keyout ca.key -out ca.pem 2>/dev/null"
    " && openssl req -new" ++ P256 ++ " -subj /CN=localhost -keyout key.pem -out req.csr 2>/dev/null"
    " && openssl x509 -req -in req.csr -CA ca.pem -CAkey ca.key -set_serial 1 -days 1"
    " -extfile ext.cnf -out cert.pem 2>/dev/null"
    " && openssl req -new" ++ P256 ++ " -subj /CN=client -keyout client-key.pem -out c.csr 2>/dev/null"
    " && openssl x509 -req -in c.csr -CA ca.pem -CAkey ca.key -set_serial 2 -days 1"
    " -extfile client.cnf -out client.pem 2>/dev/null && echo made".
