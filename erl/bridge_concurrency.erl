%% bridge_concurrency: N processes making the same call over the same time
%% windows, per-call latencies on a sampled subset of calls, and a probe that
%% shows how late a process that asks to wake every millisecond wakes while
%% the load runs.
%%
%% The procedure (the Python worker follows the same one, bridge/pyworker/conc.py):
%%  1. the batch: calls made back to back between two clock reads, calibrated
%%     (on one process, before the others start) so that a batch lasts about
%%     an eighth of a window; a later round passes the batch it got;
%%  2. N processes are spawned and each says it is ready; only when all are
%%     (a barrier) does the coordinator send them the common start T0, a
%%     warm-up later. Until T0 they warm up together;
%%  3. window I is [T0 + I*W, T0 + (I+1)*W) on the node's monotonic clock,
%%     the same for every process. A process runs batches until a batch ends
%%     past the window's end, and records {Calls, Ns} for the window: the
%%     calls it completed and the time they took. A process that finds a
%%     window already over (it was descheduled that long) records {0, 0}: the
%%     driver drops a window that any process missed;
%%  4. the last call of every batch is timed on its own: that is the sampled
%%     per-call latency. Only one call per batch pays for two clock reads,
%%     so the throughput is not distorted; the sampled call itself carries
%%     the cost of the clock reads, measured once (clock_ns) and reported
%%     beside the latencies;
%%  5. the probe, a process of normal priority like the load, asks for a
%%     timer at the next millisecond boundary (an absolute timer, so no
%%     rounding up to a whole extra millisecond), again and again from T0 to
%%     the end of the last window, and records how late each wake-up was,
%%     and how many processes were running or ready to run (probe_active);
%%  6. the schedulers' wall time (active/total) is read before the
%%     processes start warming up and after the windows: it says whether the
%%     work ran on normal or on dirty CPU schedulers. So is what the kernel
%%     says of the scheduler threads (normal and dirty CPU,
%%     /proc/self/task/TID/schedstat): the ns they ran and the ns they waited
%%     for a CPU (cpu_ns, wait_ns) over that span (span_ns);
%%  7. the races (the slowest of N): after the windows, each of the N
%%     processes makes the same fixed number of calls (race_calls; 0: the
%%     calls one process made in the median window of this request) from
%%     a common start a few milliseconds ahead, and reports when it finished,
%%     counted from that start. The slowest one's time is the race's figure,
%%     as in the ERL-1400 report (erlang/otp#4477), which timed how long the
%%     last of 10 to 160 workers took to finish the same HMAC work. `races`
%%     races run one after the other.
%%
%% Every process is linked to nothing outside this request: when the VM
%% halts (end of input: the driver went away, or Ctrl-C) they all go with it.
-module(bridge_concurrency).

-export([run/3, calibrate_batch/2, windows/5, probe/2, probe_active/2, sched_util/4,
         clock_cost/0, race_calls/1, thread_times/1]).
-export_type([params/0, window/0]).

-type params() :: #{workers := pos_integer(),
                    warmup_ns := non_neg_integer(),
                    window_ns := pos_integer(),
                    windows := pos_integer(),
                    batch := non_neg_integer(),
                    idle_probe_ms := non_neg_integer(),
                    same_output := boolean(),
                    race_calls => non_neg_integer(),
                    races => non_neg_integer()}.
%% Calls completed in a window and the ns they took; {0, 0}: window missed.
-type window() :: {non_neg_integer(), non_neg_integer()}.
-type sched() :: [{normal | dirty_cpu, non_neg_integer(), non_neg_integer()}].
-type reply() :: {ok, [{atom(), term()}, ...]} | {error, {failed, binary()}}.

%% How many batches fit in a window (step 1).
-define(BATCHES_PER_WINDOW, 8).
%% A race starts this long after the coordinator sends its start: time for
%% N messages to reach N waiting processes, even on a busy machine.
-define(RACE_LEAD_NS, 5000000).

-spec run(fun(() -> binary()), bridge_measure:loop(), params()) -> reply().
run(Once, Loop, #{workers := N, warmup_ns := WarmupNs, window_ns := W, windows := M,
                  batch := Batch0, idle_probe_ms := IdleMs, same_output := Same} = Params) ->
    Batch = case Batch0 of
                0 -> calibrate_batch(Loop, W);
                _ -> Batch0
            end,
    ClockNs = clock_cost(),
    Idle = case IdleMs of
               0 -> [];
               _ -> Now = now_ns(), probe(Now, Now + IdleMs * 1000000)
           end,
    Coord = self(),
    Workers = [spawn_monitor(fun() -> worker(Coord, Once, Loop, Batch) end)
               || _ <- lists:seq(1, N)],
    Pids = [P || {P, _} <- Workers],
    ok = await_ready(Pids),
    %% The readings start before the warm-up (the same load as the windows),
    %% and T0 is set after them: the flag can take milliseconds on a busy
    %% machine, and the coordinator, one process among N busy ones, could
    %% otherwise get to them after the windows were over.
    Threads = threads_open(),
    Wall = sched_begin(),
    Cpu0 = {now_ns(), thread_times(Threads)},
    T0 = now_ns() + WarmupNs,
    End = T0 + M * W,
    Probe = spawn_monitor(fun() -> Coord ! {probe, self(), probe_from(T0, End)} end),
    _ = [P ! {go, T0, W, M} || P <- Pids],
    Collected = collect(Workers, Probe),
    Cpu = cpu_span(Cpu0, {now_ns(), thread_times(Threads)}),
    Sched = sched_end(Wall),
    threads_close(Threads),
    Result = case Collected of
                 {ok, Results, Late} ->
                     case reply(Results, Late, Idle, Sched, Batch, N, Same, ClockNs) of
                         {ok, Reply} -> raced(Workers, Params, Reply ++ Cpu);
                         {error, _} = E -> E
                     end;
                 {error, _} = E ->
                     E
             end,
    stop_workers(Workers),
    Result.

%% Step 7 after the windows, when asked for.
raced(Workers, Params, Reply) ->
    Calls = case maps:get(race_calls, Params, 0) of
                0 -> race_calls(proplists:get_value(windows, Reply));
                Given -> Given
            end,
    case races(Workers, Calls, maps:get(races, Params, 0)) of
        {ok, []} -> {ok, Reply};
        {ok, Finished} -> {ok, Reply ++ [{race_calls, Calls}, {race_ns, Finished}]};
        {error, _} = E -> E
    end.

%% The batch that lasts about W / 8 when one process runs alone.
-spec calibrate_batch(bridge_measure:loop(), pos_integer()) -> pos_integer().
calibrate_batch(Loop, W) ->
    Target = max(1, W div ?BATCHES_PER_WINDOW),
    {Calls, T, _} = bridge_measure:calibrate(Loop, 0, Target),
    max(1, round(Calls * Target / max(T, 1))).

worker(Coord, Once, Loop, Batch) ->
    Coord ! {ready, self()},
    receive {go, T0, W, M} -> ok end,
    warm(Loop, Batch, T0),
    {Windows, Latencies} = windows(Loop, Batch, T0, W, M),
    Coord ! {done, self(), Windows, Latencies, Once()},
    racer(Coord, Loop).

%% Step 7: one race per {race, Start, Calls}; stop ends the process.
racer(Coord, Loop) ->
    receive
        {race, Start, Calls} ->
            sleep_until(Start),
            spin_until(Start),
            _ = Loop(Calls),
            Coord ! {raced, self(), now_ns() - Start},
            racer(Coord, Loop);
        stop ->
            ok
    end.

spin_until(T) ->
    case now_ns() < T of
        true -> spin_until(T);
        false -> ok
    end.

await_ready([]) -> ok;
await_ready([P | Rest]) ->
    receive {ready, P} -> await_ready(Rest) end.

warm(Loop, Batch, Until) ->
    case now_ns() >= Until of
        true -> ok;
        false -> _ = Loop(Batch), warm(Loop, Batch, Until)
    end.

%% Step 3 and 4: M windows of W ns from T0; {Windows, sampled latencies}.
-spec windows(bridge_measure:loop(), pos_integer(), integer(), pos_integer(),
              pos_integer()) -> {[window()], [non_neg_integer()]}.
windows(Loop, Batch, T0, W, M) ->
    windows(Loop, Batch, T0, W, 0, M, [], []).

windows(_Loop, _Batch, _T0, _W, M, M, Acc, Lat) ->
    {lists:reverse(Acc), Lat};
windows(Loop, Batch, T0, W, I, M, Acc, Lat) ->
    Start = now_ns(),
    End = T0 + (I + 1) * W,
    case Start >= End of
        true ->
            windows(Loop, Batch, T0, W, I + 1, M, [{0, 0} | Acc], Lat);
        false ->
            {Calls, Stop, Lat1} = until(Loop, Batch, End, 0, Lat),
            windows(Loop, Batch, T0, W, I + 1, M, [{Calls, Stop - Start} | Acc], Lat1)
    end.

%% Batches until one ends at or past End; the last call of each is timed alone.
until(Loop, Batch, End, Calls, Lat) ->
    _ = case Batch > 1 of
            true -> Loop(Batch - 1);
            false -> ok
        end,
    T0 = now_ns(),
    _ = Loop(1),
    T1 = now_ns(),
    Done = Calls + Batch,
    case T1 >= End of
        true -> {Done, T1, [T1 - T0 | Lat]};
        false -> until(Loop, Batch, End, Done, [T1 - T0 | Lat])
    end.

%% Step 5: wake at every millisecond boundary from StartNs until EndNs; how
%% late each wake-up was, in ns. The first boundary is the first after
%% StartNs, whenever the probe gets to run, and each next one the first
%% after the wake-up: a boundary is either woken at or passed in a wake-up's
%% lateness, so the wake-ups account for the whole span, however busy the
%% machine (sum of (lateness in whole ms + 1) >= the span in ms - 1).
-spec probe(integer(), integer()) -> [non_neg_integer()].
probe(StartNs, EndNs) ->
    [Late || {Late, _} <- lists:reverse(probe_at(to_ms(StartNs) + 1, EndNs, []))].

%% At each wake-up, also how many processes were running or ready to run in
%% the node (every run queue, the dirty ones included), the probe itself
%% left out: the node's demand for CPUs. A process blocked in a receive (a
%% lock's queue, a gen_server's callers) is not counted; one waiting for a
%% scheduler, or whose scheduler thread the OS has preempted, is.
-spec probe_active(integer(), integer()) -> {[non_neg_integer()], [non_neg_integer()]}.
probe_active(StartNs, EndNs) ->
    lists:unzip(lists:reverse(probe_at(to_ms(StartNs) + 1, EndNs, []))).

probe_at(NextMs, EndNs, Acc) ->
    NextNs = erlang:convert_time_unit(NextMs, millisecond, nanosecond),
    case NextNs > EndNs of
        true ->
            Acc;
        false ->
            Ref = erlang:start_timer(NextMs, self(), tick, [{abs, true}]),
            receive {timeout, Ref, tick} -> ok end,
            Now = now_ns(),
            Active = erlang:statistics(total_active_tasks_all) - 1,
            probe_at(to_ms(Now) + 1, EndNs, [{max(0, Now - NextNs), max(0, Active)} | Acc])
    end.

to_ms(Ns) ->
    erlang:convert_time_unit(Ns, nanosecond, millisecond).

probe_from(T0, End) ->
    sleep_until(T0),
    probe_active(T0, End).

sleep_until(T) ->
    case (T - now_ns()) div 1000000 of
        Ms when Ms > 0 -> receive after Ms -> ok end;
        _ -> ok
    end.

%% Every worker's windows and the probe's, or the first crash (the others are
%% killed: a level whose process died is a failed level, nothing more). The
%% workers stay monitored: they run the races next.
collect(Workers, {ProbePid, ProbeRef}) ->
    collect([{ProbePid, ProbeRef} | Workers], ProbePid, #{}, {[], []}).

collect([], _ProbePid, Results, Late) ->
    {ok, Results, Late};
collect(Waiting, ProbePid, Results, Late) ->
    receive
        {done, P, Windows, Lat, Out} ->
            Rest = lists:keydelete(P, 1, Waiting),
            collect(Rest, ProbePid, Results#{P => {Windows, Lat, Out}}, Late);
        {probe, ProbePid, Probed} ->
            collect(demonitor_flush(ProbePid, Waiting), ProbePid, Results, Probed);
        {'DOWN', _Ref, process, P, Reason} ->
            %% A worker that has finished its windows waits for the races:
            %% it must not end either.
            case lists:keymember(P, 1, Waiting) orelse maps:is_key(P, Results) of
                true -> crashed(P, ProbePid, Reason, Waiting);
                false -> collect(Waiting, ProbePid, Results, Late)
            end
    end.

crashed(P, ProbePid, Reason, Waiting) ->
    _ = [exit(Q, kill) || {Q, _} <- Waiting, Q =/= P],
    Who = case P of
              ProbePid -> <<"the probe">>;
              _ -> <<"a worker process">>
          end,
    {error, {failed, bridge_args:format("~ts of the concurrent run crashed: ~0p", [Who, Reason])}}.

demonitor_flush(P, Waiting) ->
    {P, Ref} = lists:keyfind(P, 1, Waiting),
    true = erlang:demonitor(Ref, [flush]),
    lists:keydelete(P, 1, Waiting).

%% Step 7: Count races of Calls calls each; per race, each process's time
%% from the common start to its last call's end, in the order of Workers.
races(_Workers, 0, _Count) -> {ok, []};
races(_Workers, _Calls, 0) -> {ok, []};
races(Workers, Calls, Count) ->
    races(Workers, Calls, Count, []).

races(_Workers, _Calls, 0, Acc) ->
    {ok, lists:reverse(Acc)};
races(Workers, Calls, Count, Acc) ->
    Start = now_ns() + ?RACE_LEAD_NS,
    _ = [P ! {race, Start, Calls} || {P, _} <- Workers],
    case race_collect(Workers, #{}) of
        {ok, Times} ->
            Race = [maps:get(P, Times) || {P, _} <- Workers],
            races(Workers, Calls, Count - 1, [Race | Acc]);
        {error, _} = E ->
            E
    end.

race_collect(Workers, Times) when map_size(Times) =:= length(Workers) ->
    {ok, Times};
race_collect(Workers, Times) ->
    receive
        {raced, P, Ns} ->
            race_collect(Workers, Times#{P => Ns});
        {'DOWN', _Ref, process, P, Reason} ->
            case lists:keymember(P, 1, Workers) of
                true -> crashed(P, none, Reason, Workers);
                false -> race_collect(Workers, Times)
            end
    end.

%% The calls one process made in the median window (at level 1, a race lasts
%% about a window: long enough to take its share of a busy machine's time
%% slices, as the windows do), at least one.
-spec race_calls([[window()]]) -> pos_integer().
race_calls(Windows) ->
    case lists:sort([C || Ws <- Windows, {C, _} <- Ws, C > 0]) of
        [] -> 1;
        Cs -> lists:nth((length(Cs) + 1) div 2, Cs)
    end.

%% The workers are done (or crashed, or killed): stop the live ones and
%% forget their monitors.
stop_workers(Workers) ->
    _ = [begin P ! stop, erlang:demonitor(Ref, [flush]) end || {P, Ref} <- Workers],
    ok.

reply(Results, {Late, Active}, Idle, Sched, Batch, N, Same, ClockNs) ->
    Each = maps:values(Results),
    Outputs = [Out || {_, _, Out} <- Each],
    [First | _] = Outputs,
    case Same andalso lists:any(fun(O) -> O =/= First end, Outputs) of
        true ->
            {error, {failed, <<"the concurrent processes computed different bytes">>}};
        false ->
            {ok, [{level, N},
                  {batch, Batch},
                  {windows, [Ws || {Ws, _, _} <- Each]},
                  {latency_ns, [L || {_, L, _} <- Each]},
                  {probe_ns, Late},
                  {probe_active, Active},
                  {probe_idle_ns, Idle},
                  {sched, Sched},
                  {schedulers_online, erlang:system_info(schedulers_online)},
                  {dirty_cpu_schedulers_online,
                   erlang:system_info(dirty_cpu_schedulers_online)},
                  {clock_ns, ClockNs},
                  {output, First}]}
    end.

%% Step 6. The flag is restored afterwards: turning it on costs a little on
%% every scheduler switch.
sched_begin() ->
    Old = erlang:system_flag(scheduler_wall_time, true),
    {Old, wall_time()}.

sched_end({Old, Before}) ->
    After = wall_time(),
    _ = erlang:system_flag(scheduler_wall_time, Old),
    sched_util(Before, After, erlang:system_info(schedulers_online),
               {erlang:system_info(schedulers),
                erlang:system_info(dirty_cpu_schedulers_online)}).

wall_time() ->
    case erlang:statistics(scheduler_wall_time_all) of
        undefined -> [];
        L -> lists:sort(L)
    end.

%% Active and total ns summed over the online normal schedulers (ids 1..S)
%% and the online dirty CPU schedulers (ids after all the normal ones).
-spec sched_util([{pos_integer(), non_neg_integer(), non_neg_integer()}],
                 [{pos_integer(), non_neg_integer(), non_neg_integer()}],
                 pos_integer(), {pos_integer(), non_neg_integer()}) -> sched().
sched_util(Before, After, NormalOnline, {Normal, DirtyOnline}) ->
    Diffs = [{Id, A1 - A0, T1 - T0} || {Id, A0, T0} <- Before,
                                      {Id1, A1, T1} <- After, Id1 =:= Id],
    Sum = fun(Lo, Hi) ->
              lists:foldl(fun({Id, A, T}, {SA, ST}) when Id >= Lo, Id =< Hi -> {SA + A, ST + T};
                             (_, Acc) -> Acc
                          end, {0, 0}, Diffs)
          end,
    {NA, NT} = Sum(1, NormalOnline),
    {DA, DT} = Sum(Normal + 1, Normal + DirtyOnline),
    [{normal, NA, NT}, {dirty_cpu, DA, DT}].

%% Step 6, the kernel's side: the scheduler threads' schedstat files, kept
%% open for the request ([] where /proc does not say).
threads_open() ->
    Opened = [file:open(Dir ++ "/schedstat", [raw, read, binary])
              || {_, _, Dir} <- bridge_measure:probe_threads()],
    [Fd || {ok, Fd} <- Opened].

threads_close(Fds) ->
    lists:foreach(fun file:close/1, Fds).

%% {ns run, ns waited for a CPU} summed over the threads; none if any could
%% not be read.
-spec thread_times([file:io_device()]) -> {non_neg_integer(), non_neg_integer()} | none.
thread_times([]) ->
    none;
thread_times(Fds) ->
    Read = [case file:pread(Fd, 0, 256) of
                {ok, Bin} -> bridge_measure:parse_schedstat(Bin);
                _ -> error
            end || Fd <- Fds],
    case lists:member(error, Read) of
        true -> none;
        false -> lists:foldl(fun({ok, R, W}, {SR, SW}) -> {SR + R, SW + W} end, {0, 0}, Read)
    end.

cpu_span({T0, {R0, W0}}, {T1, {R1, W1}}) ->
    [{span_ns, T1 - T0}, {cpu_ns, R1 - R0}, {wait_ns, W1 - W0}];
cpu_span({T0, _}, {T1, _}) ->
    [{span_ns, T1 - T0}].

%% What timing one call adds to its sampled latency: the median of an empty
%% timed region (the two clock reads around it), reported beside the
%% latencies, not subtracted from them.
-spec clock_cost() -> non_neg_integer().
clock_cost() ->
    Ds = lists:sort([begin T0 = now_ns(), T1 = now_ns(), T1 - T0 end || _ <- lists:seq(1, 1001)]),
    lists:nth(501, Ds).

now_ns() ->
    erlang:monotonic_time(nanosecond).
