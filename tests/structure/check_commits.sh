#!/usr/bin/env bash
# Commit subjects read in `git log --oneline`: 72 characters at most, the
# why in the body (docs/internals.md, "Commits"). Checked from the first
# commit made under the rule: the history before it is left as it was.
# Usage: check_commits.sh SOURCE_DIR. Exit 77 (skipped) outside a git
# clone, or in one too shallow to hold the rule's first commit.
set -euo pipefail
src="$1"
since=3cf6fa8 # the last commit before the rule; those after it keep it
max=72
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  echo "check_commits: skipped: $src is no git clone"
  exit 77
fi
if ! git -C "$src" cat-file -e "$since^{commit}" 2>/dev/null; then
  echo "check_commits: skipped: the clone does not hold $since (shallow)"
  exit 77
fi
long="$(git -C "$src" log --format='%h %s' "$since..HEAD" | awk -v m="$max" 'length($0) - index($0, " ") > m')"
if [[ -n "$long" ]]; then
  echo "commit subjects longer than $max characters (the why belongs in the body):" >&2
  echo "$long" >&2
  exit 1
fi
echo "check_commits: $(git -C "$src" rev-list --count "$since..HEAD") commits since $since, every subject $max characters at most"
