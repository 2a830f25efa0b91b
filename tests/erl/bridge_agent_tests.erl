%% EUnit tests for bridge_agent, the part of bridge that runs inside a node
%% measured over distribution (loaded there renamed; tested here as is).
-module(bridge_agent_tests).

-include_lib("eunit/include/eunit.hrl").

%% This node can use crypto, so the agent is ready.
prepare_test() ->
    ?assertEqual(ok, bridge_agent:prepare()).

%% A bench request runs as bridge_ops runs it, under a duty cycle when asked.
bench_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"abc">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 100000}, {<<"samples">>, 2},
            {<<"load_permille">>, 250}],
    {ok, Reply} = bridge_agent:bench(Args, 10000),
    ?assertEqual(crypto:hash(sha256, <<"abc">>), proplists:get_value(output, Reply)),
    ?assertEqual(2, length(proplists:get_value(samples, Reply))).

%% Refusals come back as bridge_ops gives them.
bench_refusal_test() ->
    ?assertMatch({error, {bad_request, _}},
                 bridge_agent:bench([{<<"call">>, <<"hash">>}], 10000)).

%% At the deadline the measurement is stopped: the process that ran it is
%% gone, and the answer says why.
bench_deadline_test() ->
    Before = processes(),
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"abc">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 50000000}, {<<"samples">>, 100}],
    ?assertMatch({error, {timeout, _}}, bridge_agent:bench(Args, 50)),
    Running = fun() -> [P || P <- processes() -- Before, is_process_alive(P),
                             erlang:process_info(P, current_function) =/= undefined,
                             runs_bridge_code(P)]
              end,
    ?assertEqual([], until_empty(Running, 5000)).

%% What Fun returns once it is [], or after about Ms: a bound on a hang, not
%% a speed (on a busy machine a killed process can take tens of ms to go).
until_empty(Fun, Ms) ->
    case Fun() of
        [] -> [];
        Left when Ms =< 0 -> Left;
        _ -> timer:sleep(10), until_empty(Fun, Ms - 10)
    end.

runs_bridge_code(P) ->
    case erlang:process_info(P, current_function) of
        {current_function, {M, _, _}} ->
            lists:member(M, [bridge_measure, bridge_loops, bridge_ops, crypto]);
        _ ->
            false
    end.

%% unload/1 removes the modules and, through the purge, every process still
%% running them. Up to 60 s, a bound on a hang: the first compile:forms/2
%% loads the compiler, which beside two CPU hogs (a load of 15) outlasted
%% EUnit's default 5 s.
unload_test_() ->
    {timeout, 60, fun unload/0}.

unload() ->
    Mod = bridge_agent_tests_victim,
    Forms = [{attribute, 1, module, Mod},
             {attribute, 2, export, [{wait, 0}]},
             {function, 3, wait, 0,
              [{clause, 3, [], [], [{'receive', 3, [{clause, 3, [{atom, 3, stop}], [],
                                                     [{atom, 3, ok}]}]}]}]}],
    {ok, Mod, Bin} = compile:forms(Forms, [binary]),
    {module, Mod} = code:load_binary(Mod, "victim", Bin),
    {Pid, Ref} = spawn_monitor(Mod, wait, []),
    ok = bridge_agent:unload([Mod]),
    receive {'DOWN', Ref, process, Pid, Why} -> ?assertEqual(killed, Why)
    after 5000 -> ?assert(false)
    end,
    ?assertEqual(false, code:is_loaded(Mod)),
    ?assertEqual(false, erlang:check_old_code(Mod)).
