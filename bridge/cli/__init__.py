"""The command line: parse, call one entry point, render."""
