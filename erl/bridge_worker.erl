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
%% The channel: started with `-bridge_channel In Out`, the frames travel on
%% those two descriptors, which the driver opened for them, and fd 1 joins
%% the captured stderr: an expression's io:format (the group leader's
%% output, through the user process), erlang:display/1 or a NIF's printf
%% lands there and never in a frame. Without the flag (the relay for --node)
%% the channel is fd 0/1, and nothing may print to standard output. Logs go
%% to standard_error only.
%%
%% A user call's request carries limit_ms, its wall-clock limit per sample
%% (--timeout): the loop that runs each sample marks the time it starts
%% (bridge_user), and a request whose last mark is older than the limit is
%% given up: its process is killed and the reply is {error, Id, {timeout,
%% Message}}. The driver then stops the node and every process its user
%% code started.
-module(bridge_worker).

-export([main/0, channel/1]).

-define(PROTOCOL, 1).

%% Never returns: the VM halts at end of input or on stop.
-spec main() -> no_return().
main() ->
    Port = open_port(channel(init:get_argument(bridge_channel)), [{packet, 4}, binary, eof]),
    send(Port, {ready, ?PROTOCOL, bridge_ops:greeting()}),
    loop(Port).

%% The descriptors the port is opened on, from -bridge_channel In Out.
-spec channel({ok, [[string()]]} | error) -> {fd, non_neg_integer(), non_neg_integer()}.
channel({ok, [[In, Out] | _]}) -> {fd, list_to_integer(In), list_to_integer(Out)};
channel(_) -> {fd, 0, 1}.

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
    Guard = guard(Args),
    {Pid, Ref} = spawn_monitor(fun() ->
                                       bridge_user:watch(Guard),
                                       Self ! {self(), dispatch(Op, Args)}
                               end),
    wait(Port, Id, {Pid, Ref}, Guard).

%% A user call's limit and the mark its sampling loop keeps up to date.
guard(Args) ->
    case lists:keyfind(<<"limit_ms">>, 1, Args) of
        {_, Ms} when is_integer(Ms), Ms > 0 -> bridge_user:guard(Ms);
        _ -> none
    end.

%% The node_... operations reach other nodes (bridge_remote); it refuses
%% them unless bridge started this worker for --node.
dispatch(<<"node_", _/binary>> = Op, Args) -> bridge_remote:handle(Op, Args);
dispatch(Op, Args) -> bridge_ops:handle(Op, Args).

wait(Port, Id, {Pid, Ref} = Op, Guard) ->
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
    after bridge_user:wait_ms(Guard) ->
        case bridge_user:overdue(Guard) of
            false ->
                wait(Port, Id, Op, Guard);
            {true, Message} ->
                erlang:demonitor(Ref, [flush]),
                exit(Pid, kill),
                {error, Id, {timeout, Message}}
        end
    end.

send(Port, Term) ->
    Port ! {self(), {command, term_to_binary(Term)}},
    ok.
