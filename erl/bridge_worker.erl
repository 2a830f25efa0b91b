%% bridge_worker: the port loop of bridge's Erlang worker.
%%
%% Started by the Python driver as
%%   erl -noshell -noinput -pa CACHE -s bridge_worker main
%% with no distribution flags: no -sname/-name, so no epmd and no socket.
%% For --node the driver adds -hidden -dist_listen false -nocookie, and this
%% worker then relays requests to running nodes (bridge_remote).
%%
%% Wire protocol ({packet,4} + external term format on fd 0/1):
%%   worker -> driver, once:  {ready, ProtocolVersion, Greeting}
%%   driver -> worker:        {call, Id, OpName :: binary(), Args :: [{binary(), term()}]}
%%   worker -> driver:        {ok, Id, Result} | {error, Id, {Class :: atom(), Message :: binary()}}
%% Requests are decoded with binary_to_term(B, [safe]) and names travel as
%% binaries mapped through explicit tables, so a request can never create
%% atoms or name code to run. End of input halts the VM, even mid-benchmark,
%% because measurements run in a separate process.
%%
%% fd 1 is the port: nothing may print to standard output. Logs go to
%% standard_error only.
-module(bridge_worker).

-export([main/0]).

-define(PROTOCOL, 1).

%% Never returns: the VM halts at end of input or on stop.
-spec main() -> no_return().
main() ->
    Port = open_port({fd, 0, 1}, [{packet, 4}, binary, eof]),
    send(Port, {ready, ?PROTOCOL, bridge_ops:greeting()}),
    loop(Port).

loop(Port) ->
    receive
        {Port, {data, Bin}} ->
            handle(Port, decode(Bin)),
            loop(Port);
        {Port, eof} ->
            halt(0);
        _Other ->
            loop(Port)
    end.

decode(Bin) ->
    try binary_to_term(Bin, [safe]) of
        {call, Id, Op, Args} when is_integer(Id), is_binary(Op), is_list(Args) ->
            {call, Id, Op, Args};
        {call, Id, _, _} when is_integer(Id) ->
            {bad, Id, <<"malformed call: operation must be a binary, arguments a list">>};
        _ ->
            {bad, 0, <<"malformed request: expected {call, Id, Op, Args}">>}
    catch
        _:_ ->
            {bad, 0, <<"undecodable request (binary_to_term with [safe] refused it)">>}
    end.

handle(Port, {bad, Id, Message}) ->
    send(Port, {error, Id, {bad_request, Message}});
handle(Port, {call, Id, <<"ping">>, _Args}) ->
    send(Port, {ok, Id, pong});
handle(Port, {call, Id, <<"stop">>, _Args}) ->
    send(Port, {ok, Id, stopping}),
    halt(0);
handle(Port, {call, Id, Op, Args}) ->
    send(Port, run_isolated(Port, Id, Op, Args)).

%% Run one operation in its own process, so that end of input (the driver
%% went away) still halts the VM while a long measurement is in progress,
%% and so that a crash in an operation becomes an error reply, not a dead
%% worker.
run_isolated(Port, Id, Op, Args) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Self ! {self(), dispatch(Op, Args)} end),
    wait(Port, Id, Pid, Ref).

%% The node_... operations reach other nodes (bridge_remote); it refuses
%% them unless bridge started this worker for --node.
dispatch(<<"node_", _/binary>> = Op, Args) -> bridge_remote:handle(Op, Args);
dispatch(Op, Args) -> bridge_ops:handle(Op, Args).

wait(Port, Id, Pid, Ref) ->
    receive
        {Pid, {ok, Result}} ->
            erlang:demonitor(Ref, [flush]),
            {ok, Id, Result};
        {Pid, {error, {Class, Message}}} ->
            erlang:demonitor(Ref, [flush]),
            {error, Id, {Class, Message}};
        {'DOWN', Ref, process, Pid, Reason} ->
            {error, Id, {failed, iolist_to_binary(io_lib:format("operation crashed: ~0p", [Reason]))}};
        {Port, eof} ->
            halt(0)
    end.

send(Port, Term) ->
    Port ! {self(), {command, term_to_binary(Term)}},
    ok.
