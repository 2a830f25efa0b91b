%% bridge_args: reading a request's arguments, and the text of the error
%% messages that refuse them.
%%
%% Every operation reads its arguments the same way, so a bad argument gives
%% the same bad_request reply wherever it is found. The readers throw
%% {bad_arg, Message}; bridge_ops catches that once per operation. Arguments
%% are data only: nothing here turns a value into an atom or into code.
-module(bridge_args).

-export([arg/2, bin_arg/2, bins_arg/3, pos_int/4, opt_int/5, printable/1, format/2]).
-export_type([args/0, bad_arg/0]).

%% Meant as [{BinaryKey, Value}]. The worker checked only that it is a list;
%% lists:keyfind/3 skips any element that is not a pair with that key.
-type args() :: [term()].
%% What the readers throw.
-type bad_arg() :: {bad_arg, binary()}.

-spec arg(binary(), args()) -> term().
arg(Key, Args) ->
    case lists:keyfind(Key, 1, Args) of
        {Key, Value} -> Value;
        false -> throw({bad_arg, <<"missing argument: ", Key/binary>>})
    end.

%% An optional integer: Default when the key is absent, else checked as
%% pos_int/4 checks it.
-spec opt_int(binary(), args(), integer(), integer(), integer()) -> integer().
opt_int(Key, Args, Default, Min, Max) ->
    case lists:keyfind(Key, 1, Args) of
        false -> Default;
        _ -> pos_int(Key, Args, Min, Max)
    end.

-spec bin_arg(binary(), args()) -> binary().
bin_arg(Key, Args) ->
    case arg(Key, Args) of
        B when is_binary(B) -> B;
        _ -> throw({bad_arg, <<"argument must be a binary: ", Key/binary>>})
    end.

%% A list of exactly Count binaries (an RSA key's integers).
-spec bins_arg(binary(), args(), pos_integer()) -> [binary()].
bins_arg(Key, Args, Count) ->
    case arg(Key, Args) of
        L when is_list(L), length(L) =:= Count ->
            case lists:all(fun erlang:is_binary/1, L) of
                true -> L;
                false -> throw({bad_arg, format("argument ~ts must be ~b binaries", [Key, Count])})
            end;
        _ ->
            throw({bad_arg, format("argument ~ts must be ~b binaries", [Key, Count])})
    end.

%% An integer in Min..Max (the name is historical: Min may be 0).
-spec pos_int(binary(), args(), integer(), integer()) -> integer().
pos_int(Key, Args, Min, Max) ->
    case arg(Key, Args) of
        I when is_integer(I), I >= Min, I =< Max -> I;
        _ -> throw({bad_arg, format("argument ~ts must be an integer in ~b..~b", [Key, Min, Max])})
    end.

%% A name from a request, quoted in an error message: at most 40 bytes, so
%% a hostile request cannot make a reply large.
-spec printable(term()) -> binary().
printable(B) when is_binary(B), byte_size(B) =< 40 -> B;
printable(<<B:40/binary, _/binary>>) -> <<B/binary, "...">>;
printable(_) -> <<"(not a binary)">>.

%% io_lib:format/2 as a binary: the driver's codec reads binaries, not
%% charlists.
-spec format(io:format(), [term()]) -> binary().
format(Format, Values) ->
    unicode:characters_to_binary(io_lib:format(Format, Values)).
