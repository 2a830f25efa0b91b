%% bridge_user: the user's own expressions (bridge time, [[calls]] in a
%% scenario file), compiled and timed like bridge's own calls.
%%
%% The driver starts the node with `-bridge_user DIR` only when the user gave
%% expressions on its command line or in a scenario file they named; DIR is
%% private (0700) and holds, per expression, a generated module
%% bridge_user_KEY.erl (Elixir: .ex) and its text (.expr). A request names an
%% expression by KEY, 16 hex digits, and nothing else: it can choose among
%% the files the driver wrote, never bring code. Without the flag every user
%% request is refused.
%%
%% An Erlang module is compiled by this node's compiler (compile:file, no
%% erl_eval: the timed loop is compiled code, as erlperf's is) and loaded; an
%% Elixir one through 'Elixir.Code':compile_string/2. The first request for
%% a key compiles it; a compile error is that request's error, with the
%% expression, and the node serves the other expressions.
-module(bridge_user).

-export([prepare/1, prepare_in/2]).
-export([guard/1, watch/1, wait_ms/1, overdue/1]).
-export_type([guard/0]).

%% A user call's wall-clock limit per sample (--timeout) and the time the
%% current step began (the request, the call for its output, each timed run
%% of its loop: bridge_measure:mark/0), in an atomic that the request's
%% process writes and bridge_worker reads: no message per sample.
-type armed() :: {atomics:atomics_ref(), LimitMs :: pos_integer()}.
-type guard() :: none | armed().

-import(bridge_args, [bin_arg/2, pos_int/4, opt_int/5]).

-spec prepare(bridge_args:args()) ->
          {ok, user_erlang | user_elixir, bridge_loops:timed_call()} | bridge_ops:error_reply().
prepare(Args) ->
    case init:get_argument(bridge_user) of
        {ok, [[Dir | _] | _]} -> prepare_in(Dir, Args);
        _ -> {error, {unknown_call, <<"unknown call: user (this node was not started with user code)">>}}
    end.

%% The same for the directory Dir (the EUnit tests give one).
-spec prepare_in(file:filename(), bridge_args:args()) ->
          {ok, user_erlang | user_elixir, bridge_loops:timed_call()} | bridge_ops:error_reply().
prepare_in(Dir, Args) ->
    Key = bin_arg(<<"expr">>, Args),
    case valid_key(Key) of
        false -> {error, {bad_request, <<"argument expr must be 16 hex digits">>}};
        true -> prepare(Dir, binary_to_list(Key), Args)
    end.

prepare(Dir, Key, Args) ->
    Base = filename:join(Dir, "bridge_user_" ++ Key),
    case filelib:is_regular(Base ++ ".expr") of
        false -> {error, {unknown_call, <<"no such user expression in this node">>}};
        true ->
            {ok, Text} = file:read_file(Base ++ ".expr"),
            Inputs = inputs(Args),
            Twice = opt_int(<<"twice">>, Args, 0, 0, 1) =:= 1,
            case load(Base, list_to_atom("bridge_user_" ++ Key), Text) of
                {ok, Mod} -> {ok, api(Base), timed(Mod, Inputs, Twice, Text)};
                {error, Message} -> {error, {failed, Message}}
            end
    end.

api(Base) ->
    case filelib:is_regular(Base ++ ".ex") of
        true -> user_elixir;
        false -> user_erlang
    end.

%% ---------------------------------------------------------------------------
%% The limit per sample.

-spec guard(pos_integer()) -> armed().
guard(LimitMs) ->
    Mark = atomics:new(1, [{signed, true}]),
    atomics:put(Mark, 1, now_ms()),
    {Mark, LimitMs}.

%% In the request's process, before it runs anything: where its marks go.
-spec watch(guard()) -> ok.
watch(none) -> bridge_measure:watch(none);
watch({Mark, _}) -> bridge_measure:watch(Mark).

%% How long bridge_worker may wait before it looks again.
-spec wait_ms(guard()) -> timeout().
wait_ms(none) -> infinity;
wait_ms({Mark, LimitMs}) -> max(0, atomics:get(Mark, 1) + LimitMs - now_ms()) + 1.

-spec overdue(guard()) -> false | {true, binary()}.
overdue(none) -> false;
overdue({Mark, LimitMs}) ->
    case now_ms() - atomics:get(Mark, 1) > LimitMs of
        true -> {true, bridge_args:format("a sample ran past the limit of ~b ms", [LimitMs])};
        false -> false
    end.

now_ms() -> erlang:monotonic_time(millisecond).

valid_key(Key) ->
    byte_size(Key) =:= 16 andalso
        lists:all(fun(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f) end,
                  binary_to_list(Key)).

%% Data, Size, Key, IV, Count, Pub, Sig: bridge.catalog.usercode.BOUND.
inputs(Args) ->
    Size = pos_int(<<"size">>, Args, 0, 1 bsl 40),
    [bin_arg(<<"data">>, Args), Size, bin_arg(<<"key">>, Args), bin_arg(<<"iv">>, Args),
     opt_int(<<"count">>, Args, Size, 0, 1 bsl 40), bin_arg(<<"pub">>, Args),
     bin_arg(<<"sig">>, Args)].

timed(Mod, Inputs, Twice, Text) ->
    Once = fun() ->
               bridge_measure:mark(),
               First = once(Mod, Inputs, Text),
               case Twice of
                   true -> <<First/binary, (once(Mod, Inputs, Text))/binary>>;
                   false -> First
               end
           end,
    Loop = fun(N) -> _ = apply(Mod, loop, [N | Inputs] ++ [ok]), ok end,
    {Once, Loop}.

%% The call's output as bytes: a binary as it is, any other term in the
%% external term format (so --same-output still compares terms).
once(Mod, Inputs, Text) ->
    try apply(Mod, once, Inputs) of
        B when is_binary(B) -> B;
        T -> term_to_binary(T)
    catch
        Class:Reason ->
            erlang:error({bridge_user,
                          bridge_args:format("~ts raised ~p:~0p", [Text, Class, Reason])})
    end.

load(Base, Mod, Text) ->
    case code:is_loaded(Mod) of
        {file, _} -> {ok, Mod};
        false ->
            case filelib:is_regular(Base ++ ".ex") of
                true -> compile_elixir(Base ++ ".ex", Mod, Text);
                false -> compile_erlang(Base ++ ".erl", Mod, Text)
            end
    end.

compile_erlang(File, Mod, Text) ->
    Compiler = compiler(),
    case Compiler:file(File, [binary, return_errors, nowarn_unused_vars]) of
        {ok, Mod, Bin} ->
            case code:load_binary(Mod, File, Bin) of
                {module, Mod} -> {ok, Mod};
                {error, Why} -> {error, bridge_args:format("~ts: cannot load: ~0p", [Text, Why])}
            end;
        {error, Errors, _Warnings} ->
            {error, bridge_args:format("~ts: compile error: ~ts", [Text, first_error(Errors)])}
    end.

first_error([{_File, [{_Loc, M, Desc} | _]} | _]) ->
    unicode:characters_to_binary(io_lib:format("~ts", [M:format_error(Desc)]));
first_error(_) ->
    <<"unknown error">>.

compile_elixir(File, Mod, Text) ->
    Code = 'Elixir.Code',
    %% Elixir's compiler keeps its state in the elixir application.
    case {code:ensure_loaded(Code), application:ensure_all_started(elixir)} of
        {{module, Code}, {ok, _}} ->
            {ok, Source} = file:read_file(File),
            try Code:compile_string(Source, unicode:characters_to_binary(File)) of
                [{Mod, _} | _] -> {ok, Mod};
                _ -> {error, bridge_args:format("~ts: compiled into no module", [Text])}
            catch
                _:Exc ->
                    {error, bridge_args:format("~ts: compile error: ~ts", [Text, exception(Exc)])}
            end;
        _ ->
            {error, bridge_args:format("~ts: Elixir is not on this node's code path", [Text])}
    end.

exception(Exc) ->
    Exception = elixir_exception(),
    try Exception:message(Exc) of
        M when is_binary(M) ->
            %% Without the generated file's name and place: the expression is shown.
            Line = hd(binary:split(M, <<"\n">>) ++ [<<>>]),
            iolist_to_binary(re:replace(Line, "^\\S*\\.ex:[0-9]+(:[0-9]+)?: ", ""))
    catch
        _:_ -> bridge_args:format("~0p", [Exc])
    end.

%% Modules outside the PLT lint uses (the compiler application, Elixir),
%% called through a variable as bridge_loops calls removed crypto functions.
compiler() -> compile.

elixir_exception() -> 'Elixir.Exception'.
