%% bridge_agent: what bridge loads into a running node that it measures over
%% Erlang distribution (`bridge run SCENARIO --node NAME@HOST --measure`).
%%
%% It is never loaded under this name. bridge/nodes/agent.py compiles it, with the
%% measurement modules it calls (bridge_ops, bridge_args, bridge_api,
%% bridge_loops, bridge_measure, bridge_info), renamed bridge_node_<hash>_<job>
%% and built by the node's own OTP release (or the nearest older one), so that
%% nothing bridge loads can clash with the node's code. bridge_remote, on
%% bridge's side, loads the binaries with code:load_binary/3 and removes them
%% with code:delete/1 and code:purge/1 when the run ends.
%%
%% Its jobs on the node:
%%  - prepare/0: crypto must be usable. An interactive node loads it from its
%%    own lib directory if nothing has used it yet; an embedded one has every
%%    module it will ever run loaded at boot, so bridge refuses instead;
%%  - guard/2: a process that watches bridge's node and, when that goes down
%%    (bridge killed with SIGKILL, the connection lost), deletes and purges
%%    every module bridge loaded. bridge purges them itself on every normal
%%    exit and on Ctrl-C; this covers the rest;
%%  - bench/2: one bench request of bridge_ops in a process of its own, killed
%%    at the deadline, so a request that bridge gave up on does not keep
%%    running on a production node.
-module(bridge_agent).

-export([prepare/0, guard/2, unload/1, bench/2]).

-spec prepare() -> ok | {error, {unsupported, binary()}}.
prepare() ->
    case {erlang:module_loaded(crypto), code:get_mode()} of
        {false, embedded} ->
            {error, {unsupported, <<"crypto is not loaded and the node runs in embedded mode,"
                                    " where bridge does not load applications">>}};
        _ ->
            case bridge_info:crypto_available() of
                {true, _} -> ok;
                {false, Why} -> {error, {unsupported, Why}}
            end
    end.

%% Bridge is the node that loaded the modules. The guard is not linked to the
%% short-lived rpc process that starts it.
-spec guard(node(), [module()]) -> {ok, pid()}.
guard(Bridge, Modules) ->
    {ok, spawn(fun() -> watch(Bridge, Modules) end)}.

watch(Bridge, Modules) ->
    true = erlang:monitor_node(Bridge, true),
    receive
        {nodedown, Bridge} -> unload(Modules)
    end.

%% code:delete/1 turns each module into old code; the purge then kills every
%% process still running it, this guard included. So the purge runs in a
%% process of its own that runs kernel code only (an external fun refers to
%% no code of ours).
-spec unload([module()]) -> ok.
unload(Modules) ->
    _ = [code:delete(M) || M <- Modules],
    _ = spawn(lists, foreach, [fun code:purge/1, Modules]),
    ok.

-spec bench(bridge_args:args(), pos_integer()) ->
          bridge_ops:reply() | {error, {timeout | failed, binary()}}.
bench(Args, TimeoutMs) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Self ! {self(), bridge_ops:handle(<<"bench">>, Args)} end),
    receive
        {Pid, Reply} ->
            erlang:demonitor(Ref, [flush]),
            Reply;
        {'DOWN', Ref, process, Pid, Reason} ->
            {error, {failed, bridge_args:format("the measurement crashed: ~0p", [Reason])}}
    after TimeoutMs ->
        exit(Pid, kill),
        erlang:demonitor(Ref, [flush]),
        {error, {timeout, bridge_args:format("the measurement took over ~b ms and was stopped",
                                             [TimeoutMs])}}
    end.
