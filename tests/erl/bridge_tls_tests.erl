-module(bridge_tls_tests).

-include_lib("eunit/include/eunit.hrl").

unknown_group_test() ->
    ?assertEqual({error, {bad_request, <<"unknown TLS group">>}},
                 bridge_tls:prepare('tlsv1.3', <<"p384">>, <<"c">>, <<"k">>, <<"ca">>)).

%% A real handshake in each version, with certificates made as
%% bridge.system.tlscert makes them (skipped without openssl or ssl).
handshake_test_() ->
    case {os:find_executable("openssl"), code:which(ssl)} of
        {false, _} -> [];
        {_, non_existing} -> [];
        _ -> {timeout, 60, fun handshakes/0}
    end.

handshakes() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    Cmd = "cd " ++ Dir ++ " && printf 'subjectAltName=DNS:localhost\\n' > ext.cnf"
        " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        " -subj /CN=ca -days 1 -keyout ca.key -out ca.pem 2>/dev/null"
        " && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        " -subj /CN=localhost -keyout key.pem -out req.csr 2>/dev/null"
        " && openssl x509 -req -in req.csr -CA ca.pem -CAkey ca.key -set_serial 1 -days 1"
        " -extfile ext.cnf -out cert.pem 2>/dev/null && echo made",
    ?assertEqual("made", string:trim(os:cmd(Cmd))),
    F = fun(Name) -> list_to_binary(filename:join(Dir, Name)) end,
    try
        lists:foreach(
          fun({V, Want}) ->
              Self = self(),
              %% In a process of its own, as bridge_worker runs each request:
              %% the listener goes with it.
              spawn(fun() ->
                  {ok, tls_connect, {Once, Loop}} =
                      bridge_tls:prepare(V, <<"x25519">>, F("cert.pem"), F("key.pem"), F("ca.pem")),
                  Out = Once(),
                  ok = Loop(2),
                  Self ! {done, Out}
              end),
              receive {done, Out} -> ?assertEqual(Want, Out) after 30000 -> ?assert(false) end
          end,
          [{'tlsv1.3', <<"TLSv1.3 TLS_AES_256_GCM_SHA384">>},
           {'tlsv1.2', <<"TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384">>}])
    after
        os:cmd("rm -rf " ++ Dir)
    end.
