%% EUnit tests for bridge_measure: calibration, the fixed-loop rounds, and
%% the thread's timer:tc statistics.
-module(bridge_measure_tests).

-include_lib("eunit/include/eunit.hrl").

spin(0) -> ok;
spin(N) -> _ = erlang:phash2(N), spin(N - 1).

%% Calibration: loops grow until one run lasts half a sample, then the
%% requested number of samples is taken with that loop count.
measure_test() ->
    Loop = fun(N) -> spin(N) end,
    {Loops, Durations, Spent} = bridge_measure:measure(Loop, {1000000, 2000000}, 4),
    ?assert(Loops >= 1),
    ?assertEqual(4, length(Durations)),
    ?assert(lists:all(fun(D) -> D > 0 end, Durations)),
    ?assert(Spent >= 1000000).

%% The measurement with a known loop count (later rounds).
measure_fixed_test() ->
    {Loops, Durations, Spent} = bridge_measure:measure_fixed(fun(N) -> spin(N) end, 0, 100, 3),
    ?assertEqual(100, Loops),
    ?assertEqual(3, length(Durations)),
    ?assertEqual(0, Spent).

%% The run stops doubling once a run lasts half a sample: the loop counts it
%% tried are 1, 2, 4, ... and it keeps the last.
calibrate_test() ->
    Self = self(),
    Loop = fun(N) -> Self ! {ran, N}, spin(N) end,
    {N, T, Spent} = bridge_measure:calibrate(Loop, 0, 200000),
    Tried = drain(),
    ?assertEqual(N, lists:last(Tried)),
    ?assert(lists:all(fun(K) -> K band (K - 1) =:= 0 end, Tried)),  % powers of two
    ?assert(T * 2 >= 200000),
    ?assert(Spent >= T).

%% One run stretched by a wait for the CPU does not set the loops: the long
%% run must last half a sample twice in a row. Here the first run (of one
%% call) waits 50 ms and a sample is 20 ms; the other runs spin, a run of one
%% call for well under a microsecond (a sleep would wait for a wake-up each
%% time, and a busy machine can stretch one past half a sample).
calibrate_stretched_test() ->
    Self = self(),
    put(stretched, true),
    Loop = fun(N) ->
                   Self ! {ran, N},
                   case erase(stretched) of
                       true -> timer:sleep(50);
                       undefined -> spin(N)
                   end
           end,
    {N, T, _} = bridge_measure:calibrate(Loop, 0, 20000000),
    [1, 1, 2 | _] = Tried = drain(),
    ?assertEqual([N, N], lists:nthtail(length(Tried) - 2, Tried)),
    ?assert(N >= 1024),
    ?assert(T * 2 >= 20000000).

drain() ->
    receive {ran, N} -> [N | drain()] after 0 -> [] end.

%% FixedLoops = 0 calibrates; FixedLoops > 0 reuses that loop count.
run_test() ->
    Loop = fun(N) -> spin(N) end,
    ?assertMatch({7, [_, _], _}, bridge_measure:run(Loop, {0, 1000, 2, 7})),
    {Loops, Durations, _} = bridge_measure:run(Loop, {0, 100000, 3, 0}),
    ?assert(Loops >= 1),
    ?assertEqual(3, length(Durations)).

%% The thread's statistics, quirks included: median = nth(round((N-1)/2)).
thread_stats_test() ->
    Stats = bridge_measure:thread_stats([3, 4, 3, 5, 0, 3]),
    ?assertEqual(0, proplists:get_value(min_us, Stats)),
    ?assertEqual(5, proplists:get_value(max_us, Stats)),
    ?assertEqual(3, proplists:get_value(median_us, Stats)),
    ?assertEqual(3, proplists:get_value(avg_us, Stats)),
    ?assertEqual(1, proplists:get_value(zero_us_calls, Stats)).

%% The harness makes N calls and drops the first, as the thread's code does.
tc_test() ->
    Self = self(),
    Stats = bridge_measure:tc({erlang, send, [Self, called]}, 5),
    ?assertEqual(5, length(drain_called())),
    ?assertEqual([min_us, max_us, median_us, avg_us, zero_us_calls], [K || {K, _} <- Stats]).

drain_called() ->
    receive called -> [called | drain_called()] after 0 -> [] end.

%% The figures are the posted code's, computed from counts per microsecond:
%% the same as the thread's list code on any list, ties and zeros included.
thread_stats_match_the_posted_code_test() ->
    rand:seed(exsss, {1, 2, 3}),
    Lists = [[3, 4], [0, 0, 0], [5, 1, 5, 1, 2], lists:seq(1, 9)]
            ++ [[rand:uniform(40) - 1 || _ <- lists:seq(1, 2 + rand:uniform(300))]
                || _ <- lists:seq(1, 200)],
    lists:foreach(fun(L) -> ?assertEqual(posted(L), bridge_measure:thread_stats(L)) end, Lists).

%% The thread's code as posted, on the list it keeps (the first call dropped).
posted(TcL) ->
    N = length(TcL) + 1,
    [{min_us, lists:min(TcL)},
     {max_us, lists:max(TcL)},
     {median_us, lists:nth(max(1, round((N - 1) / 2)), lists:sort(TcL))},
     {avg_us, round(lists:sum(TcL) / (N - 1))},
     {zero_us_calls, length([T || T <- TcL, T =:= 0])}].

%% A million calls in a process whose heap may not pass 1 M words (8 MB on
%% 64 bits): the posted list of times alone needs twice that, so a harness
%% that kept it would be killed.
tc_runs_in_bounded_memory_test() ->
    Limit = #{size => 1000000, kill => true, error_logger => false},
    Self = self(),
    Run = fun() -> Self ! {stats, self(), bridge_measure:tc({erlang, abs, [-1]}, 1000000)} end,
    {Pid, Ref} = spawn_opt(Run, [monitor, {max_heap_size, Limit}]),
    receive {'DOWN', Ref, process, Pid, Reason} -> ?assertEqual(normal, Reason) end,
    receive {stats, Pid, Stats} -> ?assertEqual(5, length(Stats)) after 0 -> ?assert(false) end.

%% Under a duty cycle of 250/1000 the measurement sleeps between timed runs
%% until its busy time is at most a quarter of the time elapsed: the wall
%% time is at least four times the busy time (less the last sub-millisecond
%% debt). The sleeps lie outside the samples, which keep their loop count.
duty_cycle_bounds_busy_share_test() ->
    Loop = fun(N) -> spin(N) end,
    T0 = erlang:monotonic_time(nanosecond),
    {Loops, Durations, Spent} = bridge_measure:run(Loop, {1000000, 2000000, 4, 0}, 250),
    Elapsed = erlang:monotonic_time(nanosecond) - T0,
    Busy = Spent + lists:sum(Durations),
    ?assert(Loops >= 1),
    ?assertEqual(4, length(Durations)),
    ?assert(Elapsed >= 4 * Busy - 1000000),
    ?assertEqual(undefined, get(bridge_measure_pace)).

%% 1000/1000 is the plain measurement: no pacing state is left behind.
full_duty_is_unpaced_test() ->
    ?assertMatch({5, [_, _], _}, bridge_measure:run(fun(N) -> spin(N) end, {0, 1000, 2, 5}, 1000)),
    ?assertEqual(undefined, get(bridge_measure_pace)).

%% The probe's parsers, on lines as the kernel writes them.
parse_test() ->
    ?assertEqual({ok, 123, 456}, bridge_measure:parse_schedstat(<<"123 456 7\n">>)),
    ?assertEqual(error, bridge_measure:parse_schedstat(<<"x">>)),
    Rest = lists:join(" ", ["S" | [integer_to_list(I) || I <- lists:seq(4, 52)]]),
    Line = iolist_to_binary(["42 (a (b) c) ", Rest, "\n"]),
    ?assertEqual(39, bridge_measure:parse_stat_cpu(Line)),
    ?assertEqual(-1, bridge_measure:parse_stat_cpu(<<"no name">>)).

%% On Linux the probe finds this node's scheduler threads by name and gives
%% every sample a CPU, CPU ns and wait ns, parallel to the durations.
run_probed_test() ->
    case bridge_measure:probe_threads() of
        [] ->
            ok;  % not Linux: nothing to probe
        Threads ->
            ?assert(lists:keymember(normal, 1, Threads)),
            {{_Loops, Durations, _}, {Cpus, CpuNs, WaitNs}} =
                bridge_measure:run_probed(fun(N) -> spin(N) end, {0, 1000000, 4, 0}, 1000),
            ?assertEqual(4, length(Durations)),
            ?assertEqual([4, 4, 4], [length(Cpus), length(CpuNs), length(WaitNs)]),
            {ok, Allowed} = file:read_file("/proc/self/status"),
            ?assert(binary:match(Allowed, <<"Cpus_allowed_list">>) =/= nomatch),
            ?assert(lists:all(fun(C) -> C >= -1 end, Cpus ++ CpuNs ++ WaitNs)),
            ?assert(lists:any(fun(C) -> C > 0 end, CpuNs))
    end.
