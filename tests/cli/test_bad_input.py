"""Bad input, table-driven: every case gets one line on stderr, exit status 2
and no traceback."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, bridge_cmd

REPORT = str(FIXTURES / "report-hmac-sha1-v1.json")


def files(tmp):
    """Bad files to point commands at, made per test."""
    made = {}

    def put(name, data):
        path = tmp / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        made[name] = str(path)

    put("bad.toml", "name = [unclosed")
    put("truncated.toml", 'name = "t"\ndescription = "d"\nkind = "mac"\ndigest = "sh')
    put("binary.toml", b"\x00\x01\x02\xff\xfe")
    put("huge.toml", "# " + "x" * 200_000)
    put("zero.toml", _scenario(sizes="[0]"))
    put("negative.toml", _scenario(sizes="[-16]"))
    put("text-size.toml", _scenario(sizes='["big"]'))
    put("absurd.toml", _scenario(sizes="[99999999999]"))
    put("unknown-alg.toml", _scenario(digest='"md4"'))
    put("code.toml", _scenario(calls='erlang = ["os:cmd"]'))
    put("levels.toml", "concurrency = [0]\n" + _scenario())
    put("notjson.json", "this is not json")
    put("wrongschema.json", json.dumps({"schema": "someone.else/1", "results": []}))
    put("future.json", json.dumps({"schema": "bridge.report/99", "results": []}))
    put("truncated.json", '{"schema": "bridge.report/1", "runtimes": [')
    put("binary.json", b"\x89PNG\r\n\x1a\n\x00\x00")
    put("noresults.json", json.dumps({"schema": "bridge.report/1", "runtimes": []}))
    put("empty.txt", "")
    put("binary.txt", b"\x00\x01\x02")
    put("unrelated.txt", "Dear list,\nmy crypto feels slow today.\n")
    not_erlang = tmp / "bin" / "erl"
    not_erlang.parent.mkdir()
    not_erlang.write_text("#!/bin/sh\necho hello\n")
    not_erlang.chmod(0o755)
    (tmp / "bin" / "erlc").symlink_to("/bin/true")
    made["not-erlang"] = str(not_erlang)
    # Unwritable even for root (tests run as root in CI): procfs takes no new files.
    made["readonly"] = "/proc"
    return made


def _scenario(sizes="[16]", digest='"sha1"', calls='erlang = ["macN"]'):
    return (
        f'name = "t"\ndescription = "d"\nkind = "mac"\ndigest = {digest}\nkey_bytes = 20\n'
        f"sizes = {sizes}\n[calls]\n{calls}\n"
    )


CASES = [
    # unknown scenario names and options
    (["run", "no-such-scenario"], "unknown scenario"),
    (["run", "hmac-sha1", "--bogus"], "--bogus"),
    (["run", "hmac-sha1", "--hw", "maybe"], "--hw"),
    (["run", "hmac-sha1", "--format", "pdf"], "--format"),
    (["run", "hmac-sha1", "--runtimes", "perl"], "unknown runtime"),
    (["frobnicate"], "No such command"),
    (["show", "no-such-scenario"], "unknown scenario"),
    # sizes: zero, negative, not numbers, absurdly large
    (["run", "hmac-sha1", "--sizes", "0"], "--sizes"),
    (["run", "hmac-sha1", "--sizes", "-16"], "--sizes"),
    (["run", "hmac-sha1", "--sizes", "lots"], "--sizes"),
    (["run", "hmac-sha1", "--sizes", "99999999999999"], "--sizes"),
    (["run", "{zero.toml}"], "'sizes'"),
    (["run", "{negative.toml}"], "'sizes'"),
    (["run", "{text-size.toml}"], "'sizes'"),
    (["run", "{absurd.toml}"], "'sizes'"),
    (["run", "hmac-sha1", "--samples", "0"], "--samples"),
    (["run", "hmac-sha1", "--samples", "many"], "--samples"),
    (["run", "hmac-sha1", "--until-stable", "2"], "--until-stable"),
    # levels of concurrency and schedulers
    (["run", "hmac-sha1", "--concurrency", "0"], "--concurrency"),
    (["run", "hmac-sha1", "--concurrency", "two"], "--concurrency"),
    (["run", "hmac-sha1", "--schedulers", "0"], "--schedulers"),
    (["run", "{levels.toml}"], "'concurrency'"),
    # the fences of user code: a limit of time per sample and of memory per process
    (["time", "--timeout", "0", "rand:bytes(4)"], "--timeout"),
    (["time", "--timeout", "never", "rand:bytes(4)"], "--timeout"),
    (["time", "--memory-limit", "4X", "rand:bytes(4)"], "--memory-limit: '4X' is not a size"),
    (["time", "--memory-limit", "1M", "rand:bytes(4)"], "from 64M to 1024G"),
    (["run", "hmac-sha1", "--memory-limit", "lots"], "--memory-limit"),
    # unknown algorithms; code in a scenario
    (["run", "{unknown-alg.toml}"], "'digest'"),
    (["run", "{code.toml}"], "unknown call 'os:cmd'"),
    # --erl: missing file, a directory, a program that is not Erlang
    (["run", "hmac-sha1", "--erl", "/no/such/erl"], "no such file"),
    (["run", "hmac-sha1", "--erl", "/tmp"], "directory"),
    (["run", "hmac-sha1", "--erl", "{not-erlang}"], "not an Erlang installation"),
    (["run", "hmac-sha1", "--erl", "otp:3"], "no working OTP 3"),
    (["run", "hmac-sha1", "--openssl", "/no/such/openssl"], "no such executable"),
    # malformed, truncated, binary or enormous scenario files
    (["run", "{bad.toml}"], "not valid TOML"),
    (["run", "{truncated.toml}"], "not valid TOML"),
    (["run", "{binary.toml}"], "not UTF-8"),
    (["run", "{huge.toml}"], "the limit is"),
    (["run", "/no/such/scenario.toml"], "no such file"),
    # reports: not JSON, wrong schema, future version, truncated, binary
    (["report", "{notjson.json}"], "not JSON"),
    (["report", "{wrongschema.json}"], "unknown schema"),
    (["report", "{future.json}"], "newer bridge"),
    (["report", "{truncated.json}"], "not JSON"),
    (["report", "{binary.json}"], "binary"),
    (["report", "{noresults.json}"], "missing field 'results'"),
    (["report", "/no/such/report.json"], "no such file"),
    (["compare", "{notjson.json}", REPORT], "not JSON"),
    # compare's gate: a threshold from 0 to 1000 percent
    (["compare", REPORT, REPORT, "--fail-if-slower", "-5"], "cannot be negative"),
    (["compare", REPORT, REPORT, "--fail-if-faster", "nan"], "'nan' is not a number"),
    (["compare", REPORT, REPORT, "--fail-if-slower", "1001"], "from 0 to 1000"),
    (["compare", REPORT, REPORT, "-q", "-v"], "--verbose and --quiet: choose one"),
    (["run", "--replay", "{future.json}"], "newer bridge"),
    # import-speed: empty, binary, unrelated text
    (["import-speed", "{empty.txt}"], "nothing recognisable"),
    (["import-speed", "{binary.txt}"], "binary"),
    (["import-speed", "{unrelated.txt}"], "nothing recognisable"),
    (["import-speed", "/no/such/file.txt"], "no such file"),
    # unwritable output paths
    (["run", "hmac-sha1", "-o", "/no/such/dir/r.json"], "does not exist"),
    (["run", "hmac-sha1", "-o", "{readonly}/r.json"], "not writable"),
    (["import-speed", REPORT, "-o", "{readonly}/r.json"], "not writable"),
    (["plot", REPORT, "--png", "{readonly}/p.png"], "not writable"),
    (["plot", REPORT, "--png", "/tmp/p.gif"], "must end in .png"),
    (["plot", REPORT, "-o", "/tmp/p.gif"], "--png FILE.png or --svg FILE.svg"),
    (["plot", REPORT], "name the picture"),
    (["run", "--until-stable", "7", "hmac-sha1"], "--until-stable=7"),
    (["run", "hmac-sha1", "--until-stable=0"], "from 0.1% to 50%"),
    (["report", REPORT, "--export-markdown", "/no/such/dir/r.md"], "--export-markdown"),
    (["report", REPORT, "--export-json", "{readonly}/r.json"], "not writable"),
    (["compare", REPORT, REPORT, "--export-html", "/no/such/dir/c.html"], "--export-html"),
]


def test_file_size_option_is_checked():
    done = bridge_cmd("run", "file-sha256", "--file-size", "lots")
    assert done.returncode == 2 and "--file-size" in done.stderr


@pytest.mark.parametrize("args, message", CASES, ids=[" ".join(a)[:50] for a, _ in CASES])
def test_bad_input(tmp_path, args, message):
    made = files(tmp_path)
    argv = []
    for a in args:
        for name, path in made.items():
            a = a.replace("{" + name + "}", path)
        argv.append(a)
    done = bridge_cmd(*argv, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (argv, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(lines) == 1, done.stderr
    assert message in lines[0], lines[0]


def test_the_table_is_big_enough():
    assert len(CASES) >= 30
