/* The words of a subcommand, read by getopt_long against the subcommand's
 * table of options: the same table its help, the man page and the bash
 * completion are made from (cli_help.c), so that what is parsed and what
 * is told cannot drift. Stricter than getopt_long alone, as progrun
 * always was: an option is its whole name (no abbreviations), a short one
 * a word of its own (no clusters, no value glued on), and the words keep
 * their order (RETURN_IN_ORDER: argv is not permuted, so the JSON
 * report's command line is the one typed). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_help.h"

/* The most options of one table. */
#define MAX_OPTIONS 32

/* getopt_long's value of entry i: past every short option's character. */
#define VALUE_OF(i) (256 + (i))

int cli_args_unknown(const char *cmd, const char *word) {
  return cli_usage_error("%s: unknown option '%s'", cmd, word);
}

/* o's short form, "-a": its alias, or its name when it has no long one
 * (pack's -o). NULL when it has none. */
static const char *short_of(const cli_help_option *o) {
  if (o->alias) return o->alias;
  return o->name[1] != '-' ? o->name : NULL;
}

/* The entry of `c`, a value getopt_long gave (a short alias or VALUE_OF). */
static const cli_help_option *entry_of(const cli_help_option *options, size_t n, int c) {
  if (c >= VALUE_OF(0) && c < VALUE_OF((int)n)) return &options[c - VALUE_OF(0)];
  for (size_t i = 0; i < n; i++)
    if (short_of(&options[i]) && short_of(&options[i])[1] == c) return &options[i];
  return NULL;
}

/* Whether `word` names o wholly: "--name", "--name=VALUE" or "-a". */
static bool whole_name(const cli_help_option *o, const char *word) {
  if (word[0] == '-' && word[1] != '-') return short_of(o) && strcmp(word, short_of(o)) == 0;
  size_t len = strcspn(word, "=");
  return strlen(o->name) == len && strncmp(word, o->name, len) == 0;
}

int cli_args_parse(const char *cmd, const cli_help_option *options, int argc, char **argv,
                   cli_arg_fn take, void *ctx) {
  struct option longs[MAX_OPTIONS + 1];
  char shorts[3 + 2 * MAX_OPTIONS + 1] = "-:"; /* words in order; ':' on a missing value */
  size_t n = 0, nlongs = 0, at = 2;
  for (; options[n].name; n++) {
    if (n == MAX_OPTIONS) return cli_fail(CLI_EXIT_FAIL, "%s: too many options", cmd);
    const cli_help_option *o = &options[n];
    if (o->name[1] == '-')
      longs[nlongs++] = (struct option){o->name + 2, o->arg ? required_argument : no_argument, NULL,
                                        VALUE_OF((int)n)};
    if (short_of(o)) {
      shorts[at++] = short_of(o)[1];
      if (o->arg) shorts[at++] = ':';
    }
  }
  longs[nlongs] = (struct option){0};
  shorts[at] = '\0';
  opterr = 0;
  optind = 0; /* glibc: start again, whatever was parsed before */
  for (;;) {
    int before = optind ? optind : 1;
    int c = getopt_long(argc, argv, shorts, longs, NULL);
    int rc;
    if (c == -1) break;
    const char *word = argv[before];
    const cli_help_option *o = entry_of(options, n, c == ':' ? optopt : c);
    const char *glued = strchr(word, '=');
    if (c == 1) {
      rc = take(ctx, CLI_ARG_WORD, NULL, optarg);
    } else if (c == '?' || !o || !whole_name(o, word)) {
      /* Unknown or abbreviated (or a flag given a value): the word as it
       * was typed. */
      rc = take(ctx, CLI_ARG_UNKNOWN, NULL, word);
    } else if (c == ':') {
      rc = take(ctx, CLI_ARG_MISSING, o, NULL);
    } else if (o->arg ? optarg != argv[before + 1] && !(glued && optarg == glued + 1)
                      : optind != before + 1) {
      /* A value glued onto a short option, or a cluster of them. */
      rc = take(ctx, CLI_ARG_UNKNOWN, NULL, word);
    } else {
      rc = take(ctx, CLI_ARG_OPTION, o, optarg);
    }
    if (rc == CLI_ARGS_STOP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
  }
  /* After "--", every word is a word, whatever it looks like. */
  for (int i = optind; i < argc; i++) {
    int rc = take(ctx, CLI_ARG_WORD, NULL, argv[i]);
    if (rc == CLI_ARGS_STOP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}
