%% EUnit tests for bridge_concurrency: the barrier and the common windows,
%% the sampled latencies, the probe, a crashing process, different outputs,
%% and the scheduler wall-time sums.
-module(bridge_concurrency_tests).

-include_lib("eunit/include/eunit.hrl").

spin(0) -> ok;
spin(N) -> _ = erlang:phash2(N), spin(N - 1).

params(Over) ->
    maps:merge(#{workers => 2, warmup_ns => 2000000, window_ns => 5000000, windows => 4,
                 batch => 0, idle_probe_ms => 3, same_output => true}, Over).

%% N processes, M windows each, every window with calls and a duration close
%% to the window; one sampled latency per batch; the probe woke during the run.
run_test() ->
    Loop = fun(N) -> spin(N) end,
    Once = fun() -> <<"out">> end,
    {ok, Reply} = bridge_concurrency:run(Once, Loop, params(#{workers => 3})),
    ?assertEqual(3, proplists:get_value(level, Reply)),
    Windows = proplists:get_value(windows, Reply),
    ?assertEqual(3, length(Windows)),
    ?assert(lists:all(fun(Ws) -> length(Ws) =:= 4 end, Windows)),
    Batch = proplists:get_value(batch, Reply),
    ?assert(Batch >= 1),
    %% Calls come in whole batches; a window that was not missed lasted at
    %% least most of a window.
    [?assertEqual(0, C rem Batch) || Ws <- Windows, {C, _} <- Ws],
    [?assert(Ns > 0) || Ws <- Windows, {C, Ns} <- Ws, C > 0],
    Lat = proplists:get_value(latency_ns, Reply),
    ?assertEqual(3, length(Lat)),
    %% One sampled latency per batch: as many as the batches each ran.
    [?assertEqual(lists:sum([C div Batch || {C, _} <- Ws]), length(L))
     || {Ws, L} <- lists:zip(Windows, Lat)],
    ?assert(is_integer(proplists:get_value(clock_ns, Reply))),
    ?assert(length(proplists:get_value(probe_ns, Reply)) >= 5),
    ?assert(length(proplists:get_value(probe_idle_ns, Reply)) >= 1),
    ?assertEqual(<<"out">>, proplists:get_value(output, Reply)),
    [{normal, A, T}, {dirty_cpu, _, _}] = proplists:get_value(sched, Reply),
    ?assert(A =< T).

%% A later round passes the batch it got; no idle probe.
fixed_batch_test() ->
    {ok, Reply} = bridge_concurrency:run(fun() -> <<>> end, fun(N) -> spin(N) end,
                                         params(#{workers => 1, batch => 7, idle_probe_ms => 0})),
    ?assertEqual(7, proplists:get_value(batch, Reply)),
    ?assertEqual([], proplists:get_value(probe_idle_ns, Reply)).

%% A process that crashes fails the level, and takes none of the others'
%% processes with it into the reply.
crash_test() ->
    Self = self(),
    Loop = fun(N) ->
               case get(crashed) of
                   undefined -> Self ! {pid, self()}, ok;
                   _ -> ok
               end,
               spin(N)
           end,
    Crash = fun() -> erlang:error(boom) end,
    {error, {failed, Message}} =
        bridge_concurrency:run(Crash, Loop, params(#{windows => 1})),
    ?assertNotEqual(nomatch, binary:match(Message, <<"crashed">>)),
    ?assertNotEqual(nomatch, binary:match(Message, <<"boom">>)),
    Pids = lists:usort(drain()) -- [self()],  % the test process calibrated the batch
    timer:sleep(50),
    ?assertEqual([], [P || P <- Pids, is_process_alive(P)]).

%% Processes that compute different bytes are refused, unless the call is
%% randomised (same_output false).
different_outputs_test() ->
    Once = fun() -> term_to_binary(self()) end,
    Loop = fun(N) -> spin(N) end,
    ?assertMatch({error, {failed, _}}, bridge_concurrency:run(Once, Loop, params(#{windows => 1}))),
    ?assertMatch({ok, _}, bridge_concurrency:run(Once, Loop,
                                                 params(#{windows => 1, same_output => false}))).

%% A window that is over before a process gets to it is recorded as missed.
missed_window_test() ->
    Now = erlang:monotonic_time(nanosecond),
    {Windows, _} = bridge_concurrency:windows(fun(N) -> spin(N) end, 1, Now - 20000000,
                                               5000000, 5),
    ?assertEqual([{0, 0}, {0, 0}, {0, 0}, {0, 0}], lists:sublist(Windows, 4)).

%% The probe wakes about once a millisecond.
probe_test() ->
    Late = bridge_concurrency:probe(erlang:monotonic_time(nanosecond) + 20000000),
    ?assert(length(Late) >= 5),
    ?assert(length(Late) =< 21),
    ?assert(lists:all(fun(L) -> L >= 0 end, Late)).

%% Normal schedulers are ids 1..S, dirty CPU ones follow all normal ones.
sched_util_test() ->
    Before = [{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {5, 0, 0}],
    After = [{1, 10, 100}, {2, 20, 100}, {3, 30, 100}, {4, 40, 100}, {5, 50, 100}],
    ?assertEqual([{normal, 30, 200}, {dirty_cpu, 30, 100}],
                 bridge_concurrency:sched_util(Before, After, 2, {2, 1})).

drain() ->
    receive {pid, P} -> [P | drain()] after 0 -> [] end.
