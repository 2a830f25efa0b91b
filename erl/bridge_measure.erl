%% bridge_measure: timing a loop of calls, and the erlang-questions thread's
%% own timer:tc harness.
%%
%% The procedure is the one in bridge/pyworker/ops.py, so that both workers are
%% measured alike:
%%  1. warm-up and calibration: run the loop with 1, 2, 4, ... iterations
%%     until two runs in a row last at least half a sample and WarmupNs have
%%     passed; all of it is discarded;
%%  2. loops = iterations that make one run last about SampleNs;
%%  3. Samples runs of that many iterations, each timed on the monotonic
%%     clock in nanoseconds. The raw durations go back to the driver, which
%%     does the statistics.
%% A later round of an interleaved run passes the loop count of the first
%% round, so every sample of a cell covers the same number of calls.
%%
%% Duty cycle (run/3, for a node bridge measures over distribution, which
%% serves its own users meanwhile): after each timed run the process sleeps
%% until its busy time is at most Permille/1000 of the time elapsed since the
%% measurement began. Warm-up and calibration count as busy time. The sleeps
%% fall between timed runs, never inside one, so the samples are the same
%% whatever the duty cycle; the busiest stretch is one sample (sample_ms).
-module(bridge_measure).

-export([run/2, run/3, measure/3, measure_fixed/4, calibrate/3]).
-export([tc/2, thread_stats/1]).
-export([watch/1, mark/0]).
-export([run_probed/3, run_metered/4, probe_threads/0, parse_schedstat/1, parse_stat_cpu/1]).
-export_type([loop/0, call_params/0, samples/0, thread_stats/0, permille/0, probed/0, meter/0]).

%% Loop(N) makes N calls (bridge_loops builds them).
-type loop() :: fun((pos_integer()) -> ok).
%% What a bench request asks for; FixedLoops = 0 means calibrate.
-type call_params() :: {WarmupNs :: non_neg_integer(), SampleNs :: pos_integer(),
                        Samples :: pos_integer(), FixedLoops :: non_neg_integer()}.
%% Loop count, one duration in ns per sample, ns spent warming up.
-type samples() :: {Loops :: pos_integer(), Durations :: [non_neg_integer()],
                    WarmupNs :: non_neg_integer()}.
-type thread_stats() :: [{min_us | max_us | median_us | avg_us | zero_us_calls, integer()}].
%% The largest share of one scheduler a measurement may keep busy, in 1/1000.
-type permille() :: 1..1000.

%% The pacing state lives in the process dictionary of the measuring process
%% (one measurement per process: bridge_worker and bridge_agent spawn one
%% each), so that the timing functions keep their shape: {StartNs, BusyNs,
%% Permille}.
-define(PACE, bridge_measure_pace).
%% The probe (run_probed/3): {Threads, Mode, Acc}, see probe_sample/2.
-define(PROBE, bridge_measure_probe).
%% A user call's guard (bridge_user): an atomic that receives the time
%% (monotonic ms) at which each timed run begins, written just before the
%% run, outside it, and read by the request's port loop (bridge_worker).
-define(MARK, bridge_measure_mark).
%% A meter read around each sample (run_metered/4): {Meter, Readings}.
-define(METER, bridge_measure_meter).

%% Something that counts while a sample runs, read before and after it, just
%% outside the probe's readings: a TLS server's CPU ns (bridge_tls_server:meter/1).
-type meter() :: fun(() -> integer()).

%% Per sample: the CPU the measuring thread ended the window on, its CPU ns
%% and run-queue wait ns over the window (-1: could not be read).
-type probed() :: {Cpus :: [integer()], CpuNs :: [integer()], WaitNs :: [integer()]}.

-spec run(loop(), call_params()) -> samples().
run(Loop, Params) ->
    run(Loop, Params, 1000).

-spec run(loop(), call_params(), permille()) -> samples().
run(Loop, Params, 1000) ->
    _ = erase(?PACE),
    run_paced(Loop, Params);
run(Loop, Params, Permille) ->
    _ = put(?PACE, {erlang:monotonic_time(nanosecond), 0, Permille}),
    try run_paced(Loop, Params) after erase(?PACE) end.

run_paced(Loop, {WarmupNs, SampleNs, Samples, 0}) ->
    measure(Loop, {WarmupNs, SampleNs}, Samples);
run_paced(Loop, {WarmupNs, _SampleNs, Samples, FixedLoops}) ->
    measure_fixed(Loop, WarmupNs, FixedLoops, Samples).

-spec measure(loop(), {WarmupNs :: non_neg_integer(), SampleNs :: pos_integer()},
              pos_integer()) -> samples().
measure(Loop, {WarmupNs, SampleNs}, Samples) ->
    {N, T, Spent} = calibrate(Loop, WarmupNs, SampleNs),
    Loops = max(1, round(N * SampleNs / max(T, 1))),
    Durations = [sample(Loop, Loops) || _ <- lists:seq(1, Samples)],
    {Loops, Durations, Spent}.

%% A later round: warm up with the known loop count, then take the samples.
-spec measure_fixed(loop(), non_neg_integer(), pos_integer(), pos_integer()) -> samples().
measure_fixed(Loop, WarmupNs, Loops, Samples) ->
    Spent = warm(Loop, Loops, WarmupNs, 0),
    {Loops, [sample(Loop, Loops) || _ <- lists:seq(1, Samples)], Spent}.

warm(_Loop, _Loops, WarmupNs, Spent) when Spent >= WarmupNs -> Spent;
warm(Loop, Loops, WarmupNs, Spent) -> warm(Loop, Loops, WarmupNs, Spent + timed(Loop, Loops)).

%% {Iterations, Ns that many took, Ns spent in all}: the count doubles until a
%% run lasts half a sample, and counts once two runs in a row at it do (the
%% shorter kept) and WarmupNs have passed. One run stretched by a wait for the
%% CPU would otherwise set the cell's loops (bridge/pyworker/ops.py alike).
-spec calibrate(loop(), non_neg_integer(), pos_integer()) ->
          {pos_integer(), non_neg_integer(), non_neg_integer()}.
calibrate(Loop, WarmupNs, SampleNs) ->
    calibrate(Loop, WarmupNs, SampleNs, 1, 0, none).

calibrate(Loop, WarmupNs, SampleNs, N, Spent0, Best0) ->
    T = timed(Loop, N),
    Spent = Spent0 + T,
    case T * 2 >= SampleNs of
        false -> calibrate(Loop, WarmupNs, SampleNs, N * 2, Spent, none);
        true when Best0 =/= none, Spent >= WarmupNs -> {N, min(T, Best0), Spent};
        true when Best0 =:= none -> calibrate(Loop, WarmupNs, SampleNs, N, Spent, T);
        true -> calibrate(Loop, WarmupNs, SampleNs, N, Spent, min(T, Best0))
    end.

%% One sample: timed, with the probe's readings just outside the timed
%% region when a probe is on (run_probed/3), and the meter's outside those
%% (run_metered/4).
sample(Loop, N) ->
    Probed = case get(?PROBE) of
                 undefined -> fun() -> timed(Loop, N) end;
                 Probe -> fun() -> probe_sample(Probe, fun() -> timed(Loop, N) end) end
             end,
    case get(?METER) of
        undefined ->
            Probed();
        {Meter, Readings} ->
            M0 = Meter(),
            T = Probed(),
            put(?METER, {Meter, [Meter() - M0 | Readings]}),
            T
    end.

%% run_probed/3 with a meter read around each sample: its count over each
%% sample window, in order.
-spec run_metered(loop(), call_params(), permille(), meter()) ->
          {samples(), probed() | none, [integer()]}.
run_metered(Loop, Params, Permille, Meter) ->
    _ = put(?METER, {Meter, []}),
    try run_probed(Loop, Params, Permille) of
        {Result, Probed} ->
            {_, Readings} = get(?METER),
            {Result, Probed, lists:reverse(Readings)}
    after
        erase(?METER)
    end.

timed(Loop, N) ->
    mark(),
    T0 = erlang:monotonic_time(nanosecond),
    _ = Loop(N),
    T = erlang:monotonic_time(nanosecond) - T0,
    pace(T),
    T.

%% Where mark/0 writes, in this process (none: nowhere).
-spec watch(atomics:atomics_ref() | none) -> ok.
watch(none) -> _ = erase(?MARK), ok;
watch(Mark) -> _ = put(?MARK, Mark), ok.

%% A step of a guarded request begins now (about 0.3 us; nothing unguarded).
-spec mark() -> ok.
mark() ->
    case get(?MARK) of
        undefined -> ok;
        Mark -> atomics:put(Mark, 1, erlang:monotonic_time(millisecond))
    end.

%% Under a duty cycle: sleep until Busy / Elapsed =< Permille / 1000. Whole
%% milliseconds only (the timer's resolution); a shorter debt waits for the
%% next run, so short calibration runs add up instead of escaping the bound.
pace(T) ->
    case get(?PACE) of
        {Start, Busy0, Permille} ->
            Busy = Busy0 + T,
            put(?PACE, {Start, Busy, Permille}),
            Due = Start + Busy * 1000 div Permille,
            WaitMs = (Due - erlang:monotonic_time(nanosecond)) div 1000000,
            case WaitMs > 0 of
                true -> receive after WaitMs -> ok end;
                false -> ok
            end;
        _ ->
            ok
    end.

%% ---------------------------------------------------------------------------
%% The thread's harness, to show what it can resolve:
%%   TC_L = tl([begin {T, _} = timer:tc(M, F, A), T end || _ <- lists:seq(1, N)]),
%%   Min, Max, Median = lists:nth(round((N - 1) / 2), lists:sort(TC_L)),
%%   Average = round(lists:sum(TC_L) / (N - 1))
%% in whole microseconds, exactly as posted (quirks included: the first call
%% is dropped, the median index is round((N-1)/2)).
%%
%% The figures are the posted code's, but not its memory: a list of N times
%% (and lists:seq's list of N) took an Erlang worker to 6.6 GB at N = 10^8.
%% The calls run in a loop that counts how many took each whole microsecond,
%% and every figure comes from those counts. They stay few whatever N is:
%% K distinct times take at least 0 + 1 + ... + (K-1) us, so an hour of
%% calls holds at most about 85,000 of them.

%% N >= 3 (bridge_ops checks), so N - 1 >= 2 calls are kept.
-spec tc({module(), atom(), [term()]}, pos_integer()) -> thread_stats().
tc({M, F, A}, N) ->
    {_Dropped, _} = timer:tc(M, F, A),
    stats_of(tc_loop(M, F, A, N - 1, #{})).

tc_loop(_M, _F, _A, 0, Counts) ->
    Counts;
tc_loop(M, F, A, Left, Counts) ->
    {T, _} = timer:tc(M, F, A),
    tc_loop(M, F, A, Left - 1, count(T, Counts)).

count(T, Counts) ->
    maps:update_with(T, fun(C) -> C + 1 end, 1, Counts).

%% The thread's statistics of a list of times (the first call already dropped).
-spec thread_stats([non_neg_integer(), ...]) -> thread_stats().
thread_stats(TcL) ->
    stats_of(lists:foldl(fun count/2, #{}, TcL)).

%% Counts: time in us -> calls that took it (at least one call).
stats_of(Counts) ->
    Times = lists:sort(maps:keys(Counts)),
    Kept = lists:sum(maps:values(Counts)),
    Sum = maps:fold(fun(T, C, Acc) -> Acc + T * C end, 0, Counts),
    [{min_us, hd(Times)},
     {max_us, lists:last(Times)},
     {median_us, nth_time(max(1, round(Kept / 2)), Times, Counts)},
     {avg_us, round(Sum / Kept)},
     {zero_us_calls, maps:get(0, Counts, 0)}].

%% The Index-th time of the sorted calls (lists:nth of the sorted list).
nth_time(Index, [T | Rest], Counts) ->
    case maps:get(T, Counts) of
        C when Index =< C -> T;
        C -> nth_time(Index - C, Rest, Counts)
    end.

%% ---------------------------------------------------------------------------
%% The probe: what the kernel says of the thread that ran each sample window.
%%
%% The measuring process runs on a scheduler thread ("N_scheduler" in
%% /proc/self/task/TID/comm, N = erlang:system_info(scheduler_id)), or, for a
%% dirty NIF (PBKDF2, large inputs), on a dirty CPU scheduler thread
%% ("N_dirty_cpu_sch"). Before and after each window the probe reads the
%% schedstat (CPU ns, run-queue wait ns) of those threads, keeps the one that
%% ran most in the window (for dirty work, the dirty CPU schedulers summed:
%% each call is a job any of them may take), and reads the CPU it last ran
%% on (field 39 of its stat). The first sample watches every candidate; later ones watch only
%% the kind that did the work (the current scheduler, or the dirty CPU
%% schedulers), and watch all again when it did less than half the window.
%% A process that moved to another scheduler in the window gets -1 for all
%% three. Files are opened raw and re-read with pread (a few tens of us);
%% what the readings cost the scheduler thread is measured once and taken
%% off (probe_overhead/0).

-spec run_probed(loop(), call_params(), permille()) -> {samples(), probed() | none}.
run_probed(Loop, Params, Permille) ->
    case probe_open() of
        none ->
            {run(Loop, Params, Permille), none};
        Threads ->
            _ = put(?PROBE, {Threads, all, 0}),
            _ = put(probe_acc, []),
            _ = put(?PROBE, {Threads, all, probe_overhead()}),
            _ = put(probe_acc, []),
            try run(Loop, Params, Permille) of
                Result ->
                    Acc = lists:reverse(get(probe_acc)),
                    {Result, {[C || {C, _, _} <- Acc], [R || {_, R, _} <- Acc],
                              [W || {_, _, W} <- Acc]}}
            after
                _ = erase(?PROBE),
                _ = erase(probe_acc),
                probe_close(Threads)
            end
    end.

%% {normal, SchedulerId, TaskDir} and {dirty, Index, TaskDir} of this node's
%% scheduler threads, by their names; [] where /proc does not say.
-spec probe_threads() -> [{normal | dirty, pos_integer(), string()}].
probe_threads() ->
    case file:list_dir("/proc/self/task") of
        {ok, Tids} -> lists:sort(lists:filtermap(fun thread_kind/1, Tids));
        {error, _} -> []
    end.

thread_kind(Tid) ->
    Dir = "/proc/self/task/" ++ Tid,
    case file:read_file(Dir ++ "/comm") of
        {ok, Comm} ->
            case re:run(Comm, "^([0-9]+)_(scheduler|dirty_cpu)", [{capture, all_but_first, list}]) of
                {match, [N, "scheduler"]} -> {true, {normal, list_to_integer(N), Dir}};
                {match, [N, "dirty_cpu"]} -> {true, {dirty, list_to_integer(N), Dir}};
                nomatch -> false
            end;
        {error, _} ->
            false
    end.

probe_open() ->
    Opened = [{Kind, N, open_raw(Dir ++ "/schedstat"), open_raw(Dir ++ "/stat")}
              || {Kind, N, Dir} <- probe_threads()],
    case [T || {_, _, {ok, _}, {ok, _}} = T <- Opened] of
        Ok when Ok =/= [], length(Ok) =:= length(Opened) ->
            [{Kind, N, S, C} || {Kind, N, {ok, S}, {ok, C}} <- Ok];
        _ ->
            probe_close(Opened),
            none
    end.

open_raw(Path) ->
    file:open(Path, [raw, read, binary]).

probe_close(Threads) ->
    lists:foreach(fun close_raw/1, [F || {_, _, S, C} <- Threads, F <- [S, C]]).

close_raw({ok, Fd}) -> file:close(Fd);
close_raw({error, _}) -> ok;
close_raw(Fd) -> file:close(Fd).

%% What the readings themselves cost the scheduler thread (a pread runs on a
%% dirty I/O scheduler while the process waits): the least of three empty
%% windows, taken off a normal scheduler's CPU ns.
probe_overhead() ->
    Probe = get(?PROBE),
    Runs = [begin _ = probe_sample(Probe, fun() -> 0 end), {_, R, _} = hd(get(probe_acc)), R end
            || _ <- [1, 2, 3]],
    max(0, lists:min(Runs)).

probe_sample({Threads, Mode, Overhead}, Timed) ->
    Id0 = erlang:system_info(scheduler_id),
    Watched = watched(Threads, Mode, Id0),
    Before = [read_schedstat(S) || {_, _, S, _} <- Watched],
    T = Timed(),
    After = [read_schedstat(S) || {_, _, S, _} <- Watched],
    Id1 = erlang:system_info(scheduler_id),
    Deltas = lists:zipwith3(fun delta/3, Watched, Before, After),
    Record = case {Id0 =:= Id1, lists:reverse(lists:keysort(2, Deltas))} of
                 {true, [{{normal, _, _, StatFd}, Run, Wait} | _]} when Run >= 0 ->
                     put(?PROBE, {Threads, next_mode(normal, Run, T), Overhead}),
                     {read_cpu(StatFd), max(0, Run - Overhead), min(T, Wait)};
                 {true, [{{dirty, _, _, StatFd}, Run, _} | _]} when Run >= 0 ->
                     %% Each call is a dirty job of its own, which any dirty
                     %% CPU scheduler may take: the window is theirs together.
                     Dirty = [D || {{dirty, _, _, _}, _, _} = D <- Deltas],
                     All = lists:sum([R || {_, R, _} <- Dirty]),
                     put(?PROBE, {Threads, next_mode(dirty, All, T), Overhead}),
                     %% The wait of those that did a tenth of it (an idle one
                     %% spinning is not the call), at most the window.
                     Waits = [W || {_, R, W} <- Dirty, R * 10 >= All],
                     {read_cpu(StatFd), All, min(T, lists:sum(Waits))};
                 _ ->
                     put(?PROBE, {Threads, all, Overhead}),
                     {-1, -1, -1}
             end,
    put(probe_acc, [Record | get(probe_acc)]),
    T.

watched(Threads, all, Id) ->
    [T || {Kind, N, _, _} = T <- Threads, Kind =:= dirty orelse N =:= Id];
watched(Threads, normal, Id) ->
    [T || {normal, N, _, _} = T <- Threads, N =:= Id];
watched(Threads, dirty, _Id) ->
    [T || {dirty, _, _, _} = T <- Threads].

%% The work's kind is watched alone while it did at least half the window.
next_mode(Kind, Run, T) when Run * 2 >= T -> Kind;
next_mode(_Kind, _Run, _T) -> all.

delta(Thread, {ok, R0, W0}, {ok, R1, W1}) -> {Thread, R1 - R0, W1 - W0};
delta(Thread, _, _) -> {Thread, -1, -1}.

read_schedstat(Fd) ->
    case file:pread(Fd, 0, 256) of
        {ok, Bin} -> parse_schedstat(Bin);
        _ -> error
    end.

read_cpu(Fd) ->
    case file:pread(Fd, 0, 2048) of
        {ok, Bin} -> parse_stat_cpu(Bin);
        _ -> -1
    end.

-spec parse_schedstat(binary()) -> {ok, integer(), integer()} | error.
parse_schedstat(Bin) ->
    try binary:split(Bin, [<<" ">>, <<"\n">>], [global, trim_all]) of
        [Run, Wait | _] -> {ok, binary_to_integer(Run), binary_to_integer(Wait)};
        _ -> error
    catch
        error:badarg -> error
    end.

%% Field 39 of a stat line; the name (field 2) may hold spaces and ')'.
-spec parse_stat_cpu(binary()) -> integer().
parse_stat_cpu(Bin) ->
    case binary:matches(Bin, <<")">>) of
        [] ->
            -1;
        Ms ->
            {Pos, 1} = lists:last(Ms),
            Rest = binary:part(Bin, Pos + 1, byte_size(Bin) - Pos - 1),
            Fields = binary:split(Rest, [<<" ">>, <<"\n">>], [global, trim_all]),
            try binary_to_integer(lists:nth(39 - 2, Fields)) catch error:_ -> -1 end
    end.
