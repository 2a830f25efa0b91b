-module(bridge_tls_server_tests).

-include_lib("eunit/include/eunit.hrl").

%% The server node: no distribution, no input but its port, schedulers that
%% do not spin (their CPU time is the handshakes'), this node's code path.
node_args_test() ->
    Args = bridge_tls_server:node_args(),
    ?assert(lists:member("-noinput", Args) andalso lists:member("-noshell", Args)),
    ?assertEqual([], [A || A <- Args, lists:member(A, ["-sname", "-name", "-setcookie"])]),
    ?assertMatch(["none" | _], tl(lists:dropwhile(fun(A) -> A =/= "+sbwt" end, Args))),
    Pa = tl(lists:dropwhile(fun(A) -> A =/= "-pa" end, Args)),
    ?assertEqual(filename:dirname(code:which(bridge_tls_server)), hd(Pa)).

%% The meter: a process's threads' CPU time, which grows with work.
meter_test() ->
    Meter = bridge_tls_server:meter(list_to_integer(os:getpid())),
    Before = Meter(),
    _ = lists:foldl(fun(X, A) -> erlang:phash2({X, A}) end, 0, lists:seq(1, 300000)),
    ?assert(Meter() > Before).

%% A listener on 127.0.0.1 lives while the process that asked for it does.
listener_test_() ->
    case {os:find_executable("openssl"), code:which(ssl)} of
        {false, _} -> [];
        {_, non_existing} -> [];
        _ -> {timeout, 60, fun listener/0}
    end.

listener() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    Made = os:cmd("cd " ++ Dir ++ " && openssl req -x509 -newkey ec -pkeyopt"
                  " ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost"
                  " -keyout key.pem -out cert.pem 2>/dev/null && echo made"),
    ?assertEqual("made", string:trim(Made)),
    F = fun(Name) -> list_to_binary(filename:join(Dir, Name)) end,
    Spec = #{version => 'tlsv1.3', resumed => false, group => <<"x25519">>,
             cert_type => <<"ecdsa-p256">>, client_auth => false, resumption => false,
             cert => F("cert.pem"), key => F("key.pem"), ca => F("cert.pem")},
    Self = self(),
    try
        ok = bridge_tls:start_ssl(),
        {Pid, Ref} = spawn_monitor(fun() ->
            {ok, Port, _Meter} = bridge_tls_server:listen(Spec),
            Self ! {port, Port},
            receive stop -> ok end
        end),
        Port = receive {port, P} -> P after 30000 -> error(no_port) end,
        {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, []),
        ok = gen_tcp:close(S),
        Pid ! stop,
        receive {'DOWN', Ref, process, Pid, _} -> ok end,
        ?assertEqual({error, econnrefused}, closed(Port, 50))
    after
        os:cmd("rm -rf " ++ Dir)
    end.

%% The manager closes the listener when it sees the asker go: soon after.
%% A connection the closing listener had queued is reset, not refused (seen
%% beside two CPU hogs): it is still closing, so look again.
closed(Port, 0) ->
    gen_tcp:connect({127, 0, 0, 1}, Port, []);
closed(Port, Tries) ->
    case gen_tcp:connect({127, 0, 0, 1}, Port, []) of
        {ok, S} -> gen_tcp:close(S), receive after 100 -> closed(Port, Tries - 1) end;
        {error, econnreset} -> receive after 100 -> closed(Port, Tries - 1) end;
        Refused -> Refused
    end.
