/* Reading back a --trace file (docs/cli.md "The trace") with jansson, for
 * the suites that run progrun: what it promises of every machine's
 * events, none of which depends on timing. */
#ifndef RIG_TRACE_CHECK_H
#define RIG_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* What a trace holds, and the first promise it breaks (why[0] == '\0':
 * none). */
typedef struct trace_facts {
  size_t machines;    /* otherData.machines, each with offset_ns and error_ns */
  size_t processes;   /* process_name events "machine M (host)" */
  size_t submits;     /* submit slices */
  size_t works;       /* work slices */
  size_t handovers;   /* hand-over slices */
  size_t windows;     /* the job's run windows on machine 0 (machine-local runs) */
  size_t readies;     /* rail instants: a count made ready */
  size_t arrivals;    /* rail instants: a count told arrived */
  size_t devices[16]; /* per machine: devices with a submit slice */
  size_t rows;        /* the most rows one track of a kind has ("cpu:0 work 2": 2) */
  long long offset_ns[16], error_ns[16]; /* per machine: otherData's */
  long long clamped;                     /* slices clamped into their hand-overs, all machines */
  char why[512];
} trace_facts;

/* Reads path and checks, for a job of `machines` machines of `runs` runs
 * each, that: it is one object with traceEvents and otherData; otherData
 * names each machine with an integer offset_ns and error_ns (machine 0's
 * both 0); each machine is a process named "machine M (...)"; each slice
 * lies on a named track, and the slices of one track do not overlap and
 * come in order; a thread id names one track in the whole file; every
 * work slice has its step's submit slice, on the same machine and device,
 * starting no later; each slice of another machine's run lies inside that
 * run's hand-over on machine 0 (it starts no sooner, ends no later); each
 * machine's "run" counter goes 0, 1, ..., runs - 1; a rail's instants of
 * one kind on one machine count up. False (why says what) when not. */
bool trace_check(const char *path, size_t machines, long long runs, trace_facts *f);

#endif
