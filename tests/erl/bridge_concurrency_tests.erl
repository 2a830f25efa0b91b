%% EUnit tests for bridge_concurrency: the barrier and the common windows,
%% the sampled latencies, the probe, the races (the slowest of N), the
%% scheduler threads' CPU time, a crashing process, different outputs, and
%% the scheduler wall-time sums. What is asserted holds however busy the
%% machine is: counts that follow from the procedure, not from how fast it ran.
-module(bridge_concurrency_tests).

-include_lib("eunit/include/eunit.hrl").

spin(0) -> ok;
spin(N) -> _ = erlang:phash2(N), spin(N - 1).

params(Over) ->
    maps:merge(#{workers => 2, warmup_ns => 2000000, window_ns => 5000000, windows => 4,
                 batch => 0, idle_probe_ms => 3, same_output => true}, Over).

%% N processes, M windows each, every window with calls and a duration close
%% to the window; one sampled latency per batch; the probe covered the run;
%% every process finished every race; the scheduler threads' times.
run_test() ->
    Loop = fun(N) -> spin(N) end,
    Once = fun() -> <<"out">> end,
    {ok, Reply} = bridge_concurrency:run(Once, Loop,
                                         params(#{workers => 3, races => 2})),
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
    %% The probe's wake-ups account for the 20 ms of windows, each either
    %% woken at or passed in a lateness (probe/2), however late it ran.
    ?assert(probe_covers(proplists:get_value(probe_ns, Reply), 20)),
    ?assert(length(proplists:get_value(probe_ns, Reply)) =< 21),
    ?assert(length(proplists:get_value(probe_idle_ns, Reply)) >= 1),
    ?assertEqual(length(proplists:get_value(probe_ns, Reply)),
                 length(proplists:get_value(probe_active, Reply))),
    ?assertEqual(<<"out">>, proplists:get_value(output, Reply)),
    [{normal, A, T}, {dirty_cpu, _, _}] = proplists:get_value(sched, Reply),
    ?assert(A =< T),
    %% Two races of the median window's calls, each finished by all three
    %% processes, after their common start.
    ?assertEqual(bridge_concurrency:race_calls(Windows), proplists:get_value(race_calls, Reply)),
    Races = proplists:get_value(race_ns, Reply),
    ?assertEqual(2, length(Races)),
    [?assertEqual(3, length(R)) || R <- Races],
    [?assert(F > 0) || R <- Races, F <- R],
    %% The span of the readings on the node's clock (the warm-up and the
    %% 20 ms of windows, whenever the coordinator got to run)
    %% and what the scheduler threads ran and waited in it.
    ?assert(proplists:get_value(span_ns, Reply) >= 20000000),
    case filelib:is_file("/proc/self/task") of
        true ->
            ?assert(proplists:get_value(cpu_ns, Reply) > 0),
            ?assert(proplists:get_value(wait_ns, Reply) >= 0);
        false ->
            ok
    end.

%% No races unless asked: no race keys in the reply.
no_race_test() ->
    {ok, Reply} = bridge_concurrency:run(fun() -> <<>> end, fun(N) -> spin(N) end,
                                         params(#{workers => 1, windows => 1})),
    ?assertEqual(undefined, proplists:get_value(race_ns, Reply)),
    ?assertEqual(undefined, proplists:get_value(race_calls, Reply)).

%% A process that crashes in a race fails the level; none of the processes
%% outlives it.
race_crash_test() ->
    Self = self(),
    Loop = fun(N) ->
               Self ! {pid, self()},
               case N of
                   26 -> erlang:error(race_boom);
                   _ -> spin(N)
               end
           end,
    {error, {failed, Message}} =
        bridge_concurrency:run(fun() -> <<>> end, Loop,
                               params(#{windows => 1, batch => 13, race_calls => 26, races => 1})),
    ?assertNotEqual(nomatch, binary:match(Message, <<"race_boom">>)),
    Pids = lists:usort(drain()) -- [self()],
    ?assertEqual([], still_alive(Pids)).

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
    ?assertEqual([], still_alive(Pids)).

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

%% The probe wakes at each millisecond boundary, or passes it in a lateness:
%% its wake-ups cover the span, however busy the machine.
probe_test() ->
    Now = erlang:monotonic_time(nanosecond),
    Late = bridge_concurrency:probe(Now, Now + 20000000),
    ?assert(probe_covers(Late, 20)),
    ?assert(length(Late) =< 21),
    ?assert(lists:all(fun(L) -> L >= 0 end, Late)).

%% A probe that ran only after the span it was to watch still says how late
%% it was: one wake-up, late by at least the span.
late_probe_test() ->
    Now = erlang:monotonic_time(nanosecond),
    Late = bridge_concurrency:probe(Now - 30000000, Now - 10000000),
    ?assertMatch([L] when L >= 20000000, Late).

%% The probe counts the processes running or ready to run, not those blocked
%% in a receive: two that spin until told to stop, three that wait.
probe_active_test() ->
    Spin = fun Spin() -> receive stop -> ok after 0 -> spin(1000), Spin() end end,
    Busy = [spawn(Spin) || _ <- [1, 2]],
    Idle = [spawn(fun() -> receive stop -> ok end end) || _ <- [1, 2, 3]],
    Now = erlang:monotonic_time(nanosecond),
    {Late, Active} = bridge_concurrency:probe_active(Now, Now + 20000000),
    [P ! stop || P <- Busy ++ Idle],
    ?assertEqual(length(Late), length(Active)),
    ?assert(lists:min(Active) >= 2),
    ?assert(lists:nth((length(Active) + 1) div 2, lists:sort(Active)) < 5).

%% A race is the median window's calls of one process, at least one.
race_calls_test() ->
    ?assertEqual(1, bridge_concurrency:race_calls([[{0, 0}]])),
    ?assertEqual(1, bridge_concurrency:race_calls([[{1, 5}]])),
    ?assertEqual(20, bridge_concurrency:race_calls([[{20, 5}, {0, 0}, {30, 5}], [{10, 5}]])).

probe_covers(Late, SpanMs) ->
    lists:sum([L div 1000000 + 1 || L <- Late]) >= SpanMs - 1.

%% Normal schedulers are ids 1..S, dirty CPU ones follow all normal ones.
sched_util_test() ->
    Before = [{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {5, 0, 0}],
    After = [{1, 10, 100}, {2, 20, 100}, {3, 30, 100}, {4, 40, 100}, {5, 50, 100}],
    ?assertEqual([{normal, 30, 200}, {dirty_cpu, 30, 100}],
                 bridge_concurrency:sched_util(Before, After, 2, {2, 1})).

drain() ->
    receive {pid, P} -> [P | drain()] after 0 -> [] end.

%% The processes of Pids that have not exited within 5 s: a bound on a hang,
%% not a speed (on a busy machine an exit signal can take tens of ms to be
%% acted on).
still_alive(Pids) ->
    Refs = [{P, erlang:monitor(process, P)} || P <- Pids],
    [P || {P, Ref} <- Refs,
          receive {'DOWN', Ref, process, P, _} -> false
          after 5000 -> true
          end].
