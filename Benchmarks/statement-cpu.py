#!/usr/bin/env python3
"""PostgreSQL CPU per statement from a server log written with log_statement = 'all' and log_statement_stats = on.

Usage: Benchmarks/statement-cpu.py SERVER_LOG_SEGMENT [TOP]

pg_stat_statements measures wall time, which on a loaded machine counts the time a backend waited for a CPU; the
statistics PostgreSQL logs per protocol message are getrusage() user + system time, so they add up to the CPU a
night cost. The parse and bind of an extended-protocol statement are logged before its `execute` line and are
counted with it; its execution after. Statements are grouped by their first 90 characters. The logging itself costs
some CPU, so the total is a little above the night's without it: compare shares, not absolute figures.
"""
import collections
import re
import sys

LINE = re.compile(r"\[(\d+)\] (LOG|DETAIL):\s+(.*)")
USAGE = re.compile(r"([\d.]+) s user, ([\d.]+) s system")


def statement_key(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()[:90]


def main() -> None:
    lines = open(sys.argv[1], errors="replace").read().split("\n")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 14
    current, pending, mode = {}, collections.defaultdict(float), {}
    cpu, calls = collections.Counter(), collections.Counter()
    for index, line in enumerate(lines):
        match = LINE.search(line)
        if not match:
            continue
        pid, kind, text = match.groups()
        if kind == "LOG" and (text.startswith("execute ") or text.startswith("statement: ")):
            sql = text.split(": ", 1)[1]
            following = index + 1
            while following < len(lines) and lines[following].startswith("\t") and "!" not in lines[following][:3]:
                sql += " " + lines[following].strip()
                following += 1
            current[pid] = statement_key(sql)
            cpu[current[pid]] += pending.pop(pid, 0.0)
            calls[current[pid]] += 1
        elif kind == "LOG" and "STATISTICS" in text:
            mode[pid] = text.strip()
        elif kind == "DETAIL" and "system usage stats" in text and pid in mode and index + 1 < len(lines):
            usage = USAGE.search(lines[index + 1])
            if usage:
                seconds = float(usage.group(1)) + float(usage.group(2))
                if mode[pid].startswith(("EXECUTE", "QUERY")):
                    cpu[current.get(pid, "(before the first statement)")] += seconds
                else:
                    pending[pid] += seconds
            del mode[pid]
    total = sum(cpu.values())
    print(f"statement CPU {total * 1000:.0f} ms in {sum(calls.values())} statements")
    for key, seconds in cpu.most_common(top):
        print(f"  {seconds * 1000:7.1f} ms {100 * seconds / total:5.1f}% {calls[key]:6d}x  {key}")


if __name__ == "__main__":
    main()
