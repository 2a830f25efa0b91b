%% bridge_tls_server: the TLS server of the tls kind, in an Erlang node of
%% its own, so that its CPU per handshake is measured apart from the client's.
%%
%% The worker (bridge_tls, in a cell's request process) asks a manager
%% process of its node, registered as bridge_tls_server and started on first
%% use, for a listener. The manager starts the server node once, as a port
%% program: this node's own emulator (erlexec), with its boot script and code
%% path, no distribution, and its schedulers never busy-waiting (+sbwt
%% none), so that its CPU time is the handshakes' work and not a scheduler
%% spinning for more. It inherits the worker's environment: the same
%% libcrypto, the same capability mask. It ends when the worker does: end of
%% input halts it, as bridge_worker halts.
%%
%% Manager -> server node ({packet,4}, external term format, on its fd 0/1):
%%   {listen, Spec}  -> {listening, Port} | {error, Message}: a listener on
%%                      127.0.0.1 and an ephemeral port, the only one (a
%%                      listener before it is closed first)
%%   close           -> closed
%%   observe         -> ok: note the client certificate of the next connection
%%   observed        -> {observed, Fingerprint | <<"none">>}
%% The manager closes a listener when the request process that asked for it
%% ends: a listener lives while its cell runs.
%%
%% The server's CPU (meter/1): the run time of every thread of the server
%% node (/proc/PID/task/TID/schedstat, ns), summed, read by the worker
%% around each sample; the threads' files are opened once, raw, by the
%% process that reads them.
-module(bridge_tls_server).

-export([listen/1, observe/0, observed/0, meter/1, main/0, node_args/0]).

-define(START_WAIT, 60000).
-define(CALL_WAIT, 30000).
-define(ACCEPT_WAIT, 10000).
-define(OBSERVE_WAIT, 5000).
-define(OBSERVED, bridge_tls_observed).

%% -- the worker's side ----------------------------------------------------------

%% A listener for the calling process's cell, and its server's CPU meter.
-spec listen(bridge_tls:spec()) ->
          {ok, inet:port_number(), fun(() -> integer())} | bridge_ops:error_reply().
listen(Spec) ->
    case call({listen, self(), Spec}, ?START_WAIT + ?CALL_WAIT) of
        {ok, Port, OsPid} -> {ok, Port, meter(OsPid)};
        {error, _} = E -> E
    end.

-spec observe() -> ok.
observe() ->
    _ = call(observe, ?CALL_WAIT),
    ok.

%% The client certificate the server saw in the connection after observe/0.
-spec observed() -> binary().
observed() ->
    case call(observed, ?CALL_WAIT) of
        {observed, Print} -> Print;
        _ -> <<"unknown">>
    end.

call(Request, Wait) ->
    Manager = manager(),
    Ref = erlang:monitor(process, Manager),
    Manager ! {call, self(), Ref, Request},
    receive
        {Ref, Reply} ->
            erlang:demonitor(Ref, [flush]),
            Reply;
        {'DOWN', Ref, process, Manager, Reason} ->
            {error, {failed, bridge_args:format("the TLS server's manager ended: ~0p", [Reason])}}
    after Wait ->
        erlang:demonitor(Ref, [flush]),
        {error, {failed, <<"the TLS server node did not answer">>}}
    end.

%% The registered manager; two requests that start one at once keep the
%% first registered (the other's goes before it has done anything).
manager() ->
    case whereis(?MODULE) of
        undefined ->
            Pid = spawn(fun() -> manage(#{}) end),
            try register(?MODULE, Pid) of
                true -> Pid
            catch
                error:badarg -> exit(Pid, kill), manager()
            end;
        Pid ->
            Pid
    end.

%% State: port and os_pid of the server node once started; caller and its
%% monitor while a listener is open.
manage(State) ->
    receive
        {call, From, Ref, Request} ->
            {Reply, Next} = handle(Request, State),
            From ! {Ref, Reply},
            manage(Next);
        {'DOWN', Mon, process, _, _} when Mon =:= map_get(monitor, State) ->
            manage(close(State));
        {Port, {exit_status, _}} when Port =:= map_get(port, State) ->
            manage(#{});
        _ ->
            manage(State)
    end.

handle({listen, Caller, Spec}, State0) ->
    case started(close(State0)) of
        {ok, #{port := Port, os_pid := OsPid} = State} ->
            case ask(Port, {listen, Spec}) of
                {listening, P} ->
                    Mon = erlang:monitor(process, Caller),
                    {{ok, P, OsPid}, State#{monitor => Mon}};
                {error, Message} ->
                    {{error, {failed, Message}}, State};
                Other ->
                    {failure(Other), stopped(State)}
            end;
        {error, _} = E ->
            {E, #{}}
    end;
handle(observe, #{port := Port} = State) ->
    {ask(Port, observe), State};
handle(observed, #{port := Port} = State) ->
    {ask(Port, observed), State};
handle(_, State) ->
    {{error, {failed, <<"no TLS server is running">>}}, State}.

close(#{port := Port, monitor := Mon} = State) ->
    erlang:demonitor(Mon, [flush]),
    _ = ask(Port, close),
    maps:remove(monitor, State);
close(State) ->
    State.

%% A server node that did not answer goes: closing its port ends its input.
stopped(#{port := Port}) ->
    catch port_close(Port),
    #{}.

failure({gone, Status}) ->
    {error, {failed, bridge_args:format("the TLS server node exited with status ~p", [Status])}};
failure(Other) ->
    {error, {failed, bridge_args:format("the TLS server node said ~0p", [Other])}}.

started(#{port := _} = State) ->
    {ok, State};
started(State) ->
    Erl = erlexec(),
    try open_port({spawn_executable, Erl},
                  [{args, node_args()}, {packet, 4}, binary, exit_status, use_stdio]) of
        Port ->
            {os_pid, OsPid} = erlang:port_info(Port, os_pid),
            case receive_reply(Port, ?START_WAIT) of
                ready -> {ok, State#{port => Port, os_pid => OsPid}};
                {failed, Message} -> _ = stopped(#{port => Port}), {error, {unsupported, Message}};
                Other -> _ = stopped(#{port => Port}), failure(Other)
            end
    catch
        error:Reason ->
            {error, {failed, bridge_args:format("cannot start the TLS server node ~ts: ~0p",
                                                [Erl, Reason])}}
    end.

%% The emulator this node runs: erlexec from its own BINDIR, which the erl
%% script exported with ROOTDIR and EMU, and the server node inherits them;
%% an installation moved from where its bin/erl script says it is (an
%% unpacked package) would start another release from there.
erlexec() ->
    case os:getenv("BINDIR") of
        false -> filename:join([code:root_dir(), "bin", "erl"]);
        Dir -> filename:join(Dir, "erlexec")
    end.

%% The server node's command line after erlexec: the worker's own boot
%% script (-boot no_dot_erlang, so ~/.erlang is not read) and code path,
%% its scheduler count, logs to standard error (fd 1 is the port), and only
%% critical ones: a connection cut short when its cell's listener closes
%% (its ticket store goes with the listener) is no news, and every
%% handshake that fails is the client's error, reported there.
-spec node_args() -> [string()].
node_args() ->
    Boot = case init:get_argument(boot) of
               {ok, [[B | _] | _]} -> ["-boot", B];
               _ -> []
           end,
    S = integer_to_list(erlang:system_info(schedulers)),
    Online = integer_to_list(erlang:system_info(schedulers_online)),
    ["+S", S ++ ":" ++ Online, "+SDio", "1", "+sbwt", "none", "+sbwtdcpu", "none",
     "+sbwtdio", "none", "-noshell", "-noinput" | Boot]
    ++ ["-kernel", "logger_level", "critical", "-kernel", "logger",
        "[{handler,default,logger_std_h,#{config => #{type => standard_error}}}]",
        "-pa", filename:dirname(code:which(?MODULE)), "-s", ?MODULE_STRING, "main"].

ask(Port, Request) ->
    Port ! {self(), {command, term_to_binary(Request)}},
    receive_reply(Port, ?CALL_WAIT).

receive_reply(Port, Wait) ->
    receive
        {Port, {data, Bin}} -> binary_to_term(Bin, [safe]);
        {Port, {exit_status, Status}} -> {gone, Status}
    after Wait ->
        timeout
    end.

%% -- the server's CPU --------------------------------------------------------------

%% The server node's CPU ns so far: every thread's run time, summed. The
%% first call opens the threads' files in the calling process.
-spec meter(pos_integer()) -> fun(() -> integer()).
meter(OsPid) ->
    fun() ->
        Files = case get({?MODULE, OsPid}) of
                    undefined ->
                        Opened = open_threads(OsPid),
                        put({?MODULE, OsPid}, Opened),
                        Opened;
                    Known ->
                        Known
                end,
        lists:sum([run_ns(F) || F <- Files])
    end.

open_threads(OsPid) ->
    Dir = "/proc/" ++ integer_to_list(OsPid) ++ "/task",
    case file:list_dir(Dir) of
        {ok, Tids} ->
            [Fd || T <- Tids,
                   {ok, Fd} <- [file:open(Dir ++ "/" ++ T ++ "/schedstat", [raw, read, binary])]];
        {error, _} ->
            []
    end.

run_ns(Fd) ->
    case file:pread(Fd, 0, 256) of
        {ok, Bin} ->
            case bridge_measure:parse_schedstat(Bin) of
                {ok, Run, _Wait} -> Run;
                error -> 0
            end;
        _ ->
            0
    end.

%% -- the server node ------------------------------------------------------------------

-spec main() -> no_return().
main() ->
    Port = open_port({fd, 0, 1}, [{packet, 4}, binary, eof]),
    case bridge_tls:start_ssl() of
        ok ->
            _ = ets:new(?OBSERVED, [named_table, public, set]),
            send(Port, ready),
            loop(Port, none);
        {error, {_, Message}} ->
            send(Port, {failed, Message}),
            halt(1)
    end.

loop(Port, Listener) ->
    receive
        {Port, {data, Bin}} ->
            loop(Port, serve(Port, binary_to_term(Bin, [safe]), Listener));
        {Port, eof} ->
            %% Nothing left to flush to: the worker is gone.
            halt(0, [{flush, false}]);
        _ ->
            loop(Port, Listener)
    end.

serve(Port, {listen, Spec}, Listener) ->
    shut(Listener),
    %% As erl started on the CPUs the driver gives this node for the cell
    %% (bridge_tls:measuring/1 says why).
    _ = erlang:system_flag(schedulers_online, bridge_tls:online(maps:get(server_cpus, Spec, 0))),
    SSL = ssl_mod(),
    case SSL:listen(0, bridge_tls:server_opts(Spec)) of
        {ok, L} ->
            {ok, {_, P}} = SSL:sockname(L),
            _ = spawn(fun() -> acceptor(SSL, L) end),
            send(Port, {listening, P}),
            L;
        {error, Reason} ->
            send(Port, {error, bridge_args:format("ssl:listen on 127.0.0.1: ~0p", [Reason])}),
            none
    end;
serve(Port, close, Listener) ->
    shut(Listener),
    send(Port, closed),
    none;
serve(Port, observe, Listener) ->
    ets:delete(?OBSERVED, last),
    ets:insert(?OBSERVED, {on, true}),
    send(Port, ok),
    Listener;
serve(Port, observed, Listener) ->
    Print = last(erlang:monotonic_time(millisecond) + ?OBSERVE_WAIT),
    ets:delete(?OBSERVED, on),
    send(Port, {observed, Print}),
    Listener;
serve(Port, _, Listener) ->
    send(Port, {error, <<"unknown request">>}),
    Listener.

%% The connection after observe may still be finishing on the server's side.
last(Deadline) ->
    case ets:lookup(?OBSERVED, last) of
        [{last, Print}] -> Print;
        [] ->
            case erlang:monotonic_time(millisecond) < Deadline of
                true -> receive after 5 -> last(Deadline) end;
                false -> <<"none seen">>
            end
    end.

shut(none) -> ok;
shut(L) -> _ = (ssl_mod()):close(L), ok.

%% Each connection is served by a process of its own (as servers do), so
%% that N clients at once (--concurrency) do not queue behind one server
%% handshake; the acceptor goes when the listener is closed.
acceptor(SSL, L) ->
    case SSL:transport_accept(L, ?ACCEPT_WAIT) of
        {ok, T} ->
            Pid = spawn(fun() -> receive {serve, T} -> handshake(SSL, T) after ?ACCEPT_WAIT -> ok end end),
            _ = case SSL:controlling_process(T, Pid) of
                    ok -> Pid ! {serve, T};
                    {error, _} -> _ = SSL:close(T), exit(Pid, kill)
                end,
            acceptor(SSL, L);
        {error, timeout} ->
            acceptor(SSL, L);
        {error, _} ->
            ok
    end.

handshake(SSL, T) ->
    case SSL:handshake(T, ?ACCEPT_WAIT) of
        {ok, S} ->
            note(SSL, S),
            _ = SSL:close(S);
        _ ->
            _ = SSL:close(T)
    end,
    ok.

%% While observing: the client certificate this connection presented.
note(SSL, S) ->
    case ets:member(?OBSERVED, on) of
        false -> ok;
        true ->
            Print = case SSL:peercert(S) of
                        {ok, Der} -> bridge_tls:fingerprint(Der);
                        _ -> <<"none">>
                    end,
            ets:insert(?OBSERVED, {last, Print})
    end.

send(Port, Term) ->
    Port ! {self(), {command, term_to_binary(Term)}},
    ok.

ssl_mod() -> ssl.
