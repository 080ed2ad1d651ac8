#!/usr/bin/env bash
# Progress of a Maven build for a person waiting on it: reads Maven's output (-B, not -q) on stdin, keeps all of
# it in LOG, and prints to stderr one line per module as Maven starts it ("NAME: [3/24] disco-core, 5 s"), a
# notice when Maven starts downloading (the first build on a machine: dependencies and plugins into the local
# repository), a count of the files downloaded every 100, and the total time at the end. Exits 0; the caller
# checks Maven's own exit status (set -o pipefail) and shows LOG's end when it failed.
#
#   mvn -B ... 2>&1 | scripts/maven-progress.sh demo "$log"
set -uo pipefail
name=${1:?usage: maven-progress.sh NAME LOG}
log=${2:?usage: maven-progress.sh NAME LOG}
: >"$log"
start=$SECONDS
noticed=0
downloaded=0
esc=$(printf '\033')
while IFS= read -r line; do
  printf '%s\n' "$line" >>"$log"
  line=${line//${esc}\[[0-9;]*m/}   # Maven colours some lines even with -B
  case $line in
    "[INFO] Building "*" ["*/*"]")
      module=${line#"[INFO] Building "}
      step=${line##*[}
      printf '%s: [%s] %s, %d s\n' "$name" "${step%]}" "${module%% *}" $((SECONDS - start)) >&2 ;;
    *"Downloading from "* | *"Downloaded from "*)
      if [ "$noticed" -eq 0 ]; then
        printf '%s: Maven is downloading dependencies and plugins into its local repository: the first build on a machine takes minutes\n' "$name" >&2
        noticed=1
      fi
      case $line in
        *"Downloaded from "*)
          downloaded=$((downloaded + 1))
          if [ $((downloaded % 100)) -eq 0 ]; then
            printf '%s:   %d files downloaded, %d s\n' "$name" "$downloaded" $((SECONDS - start)) >&2
          fi ;;
      esac ;;
    "[INFO] BUILD SUCCESS")
      printf '%s: built in %d s%s\n' "$name" $((SECONDS - start)) \
        "$([ "$downloaded" -gt 0 ] && echo " ($downloaded files downloaded)")" >&2 ;;
    "[INFO] BUILD FAILURE")
      printf '%s: the build failed after %d s\n' "$name" $((SECONDS - start)) >&2 ;;
  esac
done
exit 0
