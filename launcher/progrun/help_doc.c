/* progrun_doc: progrun's man page and bash completion, made at build time
 * from the help's table (cli_help.c), so that they say what --help says.
 *
 * Usage: progrun_doc man|bash OUT
 * Writes OUT whole (a temporary beside it, renamed) or not at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_help.h"
#include "rig/rig_base.h"

/* s in roff: a backslash doubled as \e, '-' as \-, a line's leading '.' or
 * '\'' guarded by \&. */
static void roff(FILE *f, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if ((c == '.' || c == '\'') && (i == 0 || s[i - 1] == '\n')) fputs("\\&", f);
    if (c == '\\')
      fputs("\\e", f);
    else if (c == '-')
      fputs("\\-", f);
    else
      fputc(c, f);
  }
}

static void roff_text(FILE *f, const char *s) {
  roff(f, s, strlen(s));
}

/* Paragraphs apart by "\n\n", each after .PP. */
static void roff_paragraphs(FILE *f, const char *text) {
  while (*text) {
    const char *end = strstr(text, "\n\n");
    size_t n = end ? (size_t)(end - text) : strlen(text);
    fputs(".PP\n", f);
    roff(f, text, n);
    fputc('\n', f);
    if (!end) break;
    text = end + 2;
  }
}

static void roff_option(FILE *f, const cli_help_option *o) {
  fputs(".TP\n", f);
  if (o->alias) {
    fputs("\\fB", f);
    roff_text(f, o->alias);
    fputs("\\fR, ", f);
  }
  fputs("\\fB", f);
  roff_text(f, o->name);
  fputs("\\fR", f);
  if (o->arg) {
    fputs(" \\fI", f);
    roff_text(f, o->arg);
    fputs("\\fR", f);
  }
  fputc('\n', f);
  roff_text(f, o->what);
  fputc('\n', f);
}

static void man(FILE *f) {
  fprintf(f, ".\\\" progrun(1), made by progrun_doc from progrun's help (cli_help.c).\n");
  fprintf(f, ".TH PROGRUN 1 \"\" \"progrun %s\" \"User Commands\"\n", RIG_VERSION_STRING);
  fputs(".SH NAME\nprogrun \\- load programs once, run them many times, on every machine of "
        "an MPI job\n.SH SYNOPSIS\n.nf\n",
        f);
  for (size_t i = 0; i < cli_nhelps; i++)
    for (int k = 0; k < 3 && cli_helps[i].synopsis[k]; k++) {
      fputs("\\fBprogrun\\fR ", f);
      roff_text(f, cli_helps[i].synopsis[k]);
      fputc('\n', f);
    }
  fputs("\\fBprogrun\\fR \\-h | \\-\\-help\n\\fBprogrun\\fR \\-V | \\-\\-version\n.fi\n", f);
  fputs(".SH DESCRIPTION\n", f);
  roff_paragraphs(f, cli_help_file);
  fputs(".SH OPTIONS\n", f);
  for (const cli_help_option *o = cli_help_global; o->name; o++) roff_option(f, o);
  fputs(".SH COMMANDS\n", f);
  for (size_t i = 0; i < cli_nhelps; i++) {
    const cli_help *h = &cli_helps[i];
    fprintf(f, ".SS %s\n.nf\n", h->name);
    for (int k = 0; k < 3 && h->synopsis[k]; k++) {
      fputs("progrun ", f);
      roff_text(f, h->synopsis[k]);
      fputc('\n', f);
    }
    fputs(".fi\n", f);
    roff_paragraphs(f, h->text);
    for (const cli_help_option *o = h->options; o->name; o++) roff_option(f, o);
  }
  fputs(".SH EXIT STATUS\n", f);
  roff_paragraphs(f, cli_help_exit_status);
  fputs(".SH SEE ALSO\n\\fBmpirun\\fR(1), \\fBsrun\\fR(1), \\fBdot\\fR(1)\n", f);
}

/* The words of a list of options (name and alias), or of those whose value
 * is (path) or is not (!path) a file. */
static void option_words(FILE *f, const cli_help_option *o, int which) {
  const char *sep = "";
  for (; o->name; o++) {
    if (which == 0 && o->arg) continue;
    if (which == 1 && (!o->arg || !o->path)) continue;
    if (which == 2 && (!o->arg || o->path)) continue;
    fprintf(f, "%s%s", sep, o->name);
    sep = " ";
    if (o->alias) fprintf(f, " %s", o->alias);
  }
}

static void bash(FILE *f) {
  fputs("# bash completion for progrun, made by progrun_doc from progrun's help.\n"
        "_progrun() {\n"
        "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
        "  local commands=\"",
        f);
  for (size_t i = 0; i < cli_nhelps; i++) fprintf(f, "%s%s", i ? " " : "", cli_helps[i].name);
  fputs("\"\n"
        "  local cmd=\"\" i\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    if [[ \"${COMP_WORDS[i]}\" != -* ]]; then cmd=\"${COMP_WORDS[i]}\"; break; fi\n"
        "  done\n"
        "  COMPREPLY=()\n"
        "  if [[ -z \"$cmd\" ]]; then\n"
        "    if [[ \"$cur\" == -* ]]; then\n"
        "      mapfile -t COMPREPLY < <(compgen -W \"",
        f);
  option_words(f, cli_help_global, -1);
  fputs("\" -- \"$cur\")\n"
        "    else\n"
        "      mapfile -t COMPREPLY < <(compgen -W \"$commands\" -- \"$cur\"; compgen -f -- "
        "\"$cur\")\n"
        "    fi\n"
        "    return 0\n"
        "  fi\n"
        "  # A first word naming no command is run's FILE.\n"
        "  [[ \" $commands \" == *\" $cmd \"* ]] || cmd=run\n"
        "  local flags=\"\" values=\"\"\n"
        "  case \"$cmd\" in\n",
        f);
  for (size_t i = 0; i < cli_nhelps; i++) {
    const cli_help *h = &cli_helps[i];
    fprintf(f, "    %s) flags=\"", h->name);
    option_words(f, h->options, -1);
    fputs("\" values=\"", f);
    option_words(f, h->options, 2);
    fputs("\" ;;\n", f);
  }
  fputs("  esac\n"
        "  # After an option whose value is no file, nothing to offer.\n"
        "  if [[ -n \"$values\" && \" $values \" == *\" $prev \"* ]]; then return 0; fi\n"
        "  if [[ \"$cur\" == -* ]]; then\n"
        "    mapfile -t COMPREPLY < <(compgen -W \"$flags\" -- \"$cur\")\n"
        "  elif [[ \"$cmd\" == help ]]; then\n"
        "    mapfile -t COMPREPLY < <(compgen -W \"$commands\" -- \"$cur\")\n"
        "  else\n"
        "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
        "  fi\n"
        "  return 0\n"
        "}\n"
        "complete -o filenames -F _progrun progrun\n",
        f);
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "man") != 0 && strcmp(argv[1], "bash") != 0)) {
    fprintf(stderr, "usage: progrun_doc man|bash OUT\n");
    return 2;
  }
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]) >= (int)sizeof tmp) {
    fprintf(stderr, "progrun_doc: %s: path too long\n", argv[2]);
    return 2;
  }
  FILE *f = fopen(tmp, "w");
  if (!f) {
    perror(tmp);
    return 1;
  }
  if (strcmp(argv[1], "man") == 0)
    man(f);
  else
    bash(f);
  if (ferror(f) | fclose(f) || rename(tmp, argv[2]) != 0) {
    perror(argv[2]);
    remove(tmp);
    return 1;
  }
  return 0;
}
