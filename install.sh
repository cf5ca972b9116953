#!/bin/sh
# Build ai-sandbox with meson and install it for one user (default prefix
# ~/.local), or remove what an earlier run installed.
#
# Usage: install.sh [--prefix DIR] [--alias NAME] [--uninstall]
#   --prefix DIR   where to install (default: ~/.local): bin/ai-sandbox,
#                  bin/aisb-gate, share/ai-sandbox (the sources the image
#                  build compiles), share/man, share/bash-completion
#   --alias NAME   also add "alias NAME=ai-sandbox" to your shell's rc file
#                  (~/.bashrc or ~/.zshrc); only when asked
#   --uninstall    remove every file the manifest of PREFIX lists, and the
#                  alias line this script added; nothing else
#
# The manifest (PREFIX/share/ai-sandbox/install-manifest) records each
# installed file and the rc line, so that --uninstall removes exactly those.
# Needs meson, ninja, a C compiler and libevent, openssl, c-ares and
# libcjson with their headers (scripts/deps); podman to run sandboxes.
set -eu

prog=install.sh
src=$(cd "$(dirname "$0")" && pwd)
prefix="${HOME:?HOME is not set}/.local"
alias_name=
uninstall=0
marker="# added by ai-sandbox install.sh"

die() {
	echo "$prog: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--prefix)
		[ $# -ge 2 ] || die "--prefix: missing directory"
		prefix=$2
		shift 2 ;;
	--prefix=*)
		prefix=${1#--prefix=}
		shift ;;
	--alias)
		[ $# -ge 2 ] || die "--alias: missing name"
		alias_name=$2
		shift 2 ;;
	--alias=*)
		alias_name=${1#--alias=}
		shift ;;
	--uninstall)
		uninstall=1
		shift ;;
	--help|-h)
		sed -n '2,17s/^# \{0,1\}//p' "$0"
		exit 0 ;;
	*)
		die "$1: unknown argument (try --help)" ;;
	esac
done

case $prefix in
/*) ;;
*) die "--prefix: $prefix is not an absolute path" ;;
esac
prefix=${prefix%/}
[ -n "$prefix" ] || die "--prefix: / is not a prefix for one user's install"
if [ -n "$alias_name" ]; then
	case $alias_name in
	*[!A-Za-z0-9_.-]* | -* | "")
		die "--alias: \"$alias_name\" is not a plain command name" ;;
	esac
fi

manifest="$prefix/share/ai-sandbox/install-manifest"

# The rc file of the user's shell.
shell_rc() {
	case ${SHELL:-} in
	*/zsh) echo "$HOME/.zshrc" ;;
	*) echo "$HOME/.bashrc" ;;
	esac
}

# Remove the lines this script added to an rc file (they carry the marker).
rc_remove() {
	rc=$1
	[ -f "$rc" ] || return 0
	grep -F -- "$marker" "$rc" >/dev/null 2>&1 || return 0
	tmp=$(mktemp "$rc.XXXXXX")
	grep -v -F -- "$marker" "$rc" > "$tmp" || true
	cat "$tmp" > "$rc"
	rm -f "$tmp"
	echo "removed the ai-sandbox alias from $rc"
}

if [ "$uninstall" -eq 1 ]; then
	[ -f "$manifest" ] || die "no manifest at $manifest: nothing of an" \
	    "install.sh install is there (give the --prefix it used)"
	removed=0
	dirs=
	while IFS= read -r line; do
		case $line in
		"file "* | "dir "*)
			f=${line#* }
			case $f in
			"$prefix" | "$prefix"/*) ;;
			*) echo "$prog: skipping $f: outside $prefix" >&2
			   continue ;;
			esac
			if [ "${line%% *}" = dir ]; then
				dirs="$dirs
$f"
			elif [ -f "$f" ] || [ -L "$f" ]; then
				rm -f -- "$f"
				removed=$((removed + 1))
			fi ;;
		"rc "*)
			rc_remove "${line#rc }" ;;
		esac
	done < "$manifest"
	rm -f -- "$manifest"
	# The directories meson created, deepest first, if now empty.
	printf '%s\n' "$dirs" | awk 'NF' | sort -u -r | while IFS= read -r d; do
		rmdir -- "$d" 2>/dev/null || true
	done
	echo "removed $removed files installed under $prefix"
	exit 0
fi

for tool in meson ninja; do
	command -v "$tool" >/dev/null 2>&1 ||
	    die "$tool is needed to build (apt install meson ninja-build)"
done
[ -f "$src/meson.build" ] || die "$src/meson.build: not an ai-sandbox tree"

build=$(mktemp -d "${TMPDIR:-/tmp}/ai-sandbox-build.XXXXXX")
trap 'rm -rf "$build"' EXIT INT TERM
echo "building in $build for $prefix"
meson setup "$build" "$src" --prefix "$prefix" -Dtests=false \
    --buildtype=release >/dev/null ||
    die "meson setup failed (missing libraries? see the lines above)"
ninja -C "$build" >/dev/null || die "the build failed"
meson install -C "$build" --no-rebuild >/dev/null || die "meson install failed"

# Every file meson installed, then the rc line, in the manifest.
log="$build/meson-logs/install-log.txt"
[ -f "$log" ] || die "meson wrote no install log ($log)"
mkdir -p "$(dirname "$manifest")"
{
	echo "# ai-sandbox install.sh manifest: install.sh --uninstall" \
	    "--prefix $prefix removes these"
	# meson lists the directories it created too: those are "dir".
	grep -v '^#' "$log" | awk 'NF' | while IFS= read -r f; do
		if [ -d "$f" ] && [ ! -L "$f" ]; then
			echo "dir $f"
		else
			echo "file $f"
		fi
	done
} > "$manifest.new"

if [ -n "$alias_name" ]; then
	rc=$(shell_rc)
	line="alias $alias_name='$prefix/bin/ai-sandbox'  $marker"
	if [ -f "$rc" ] && grep -F -x -- "$line" "$rc" >/dev/null 2>&1; then
		echo "$rc already has the alias $alias_name"
	else
		printf '%s\n' "$line" >> "$rc"
		echo "added alias $alias_name to $rc (open a new shell)"
	fi
	echo "rc $rc" >> "$manifest.new"
fi
if [ -f "$manifest" ]; then
	# A reinstall keeps what an earlier one created: meson lists only the
	# directories it made this time, and the alias may be from then.
	grep -e '^dir ' -e '^rc ' "$manifest" | while IFS= read -r line; do
		grep -F -x -- "$line" "$manifest.new" >/dev/null ||
		    printf '%s\n' "$line"
	done > "$manifest.keep"
	cat "$manifest.keep" >> "$manifest.new"
	rm -f "$manifest.keep"
fi
mv "$manifest.new" "$manifest"

echo "installed $(grep -c '^file ' "$manifest") files under $prefix"
case ":${PATH:-}:" in
*":$prefix/bin:"*) ;;
*) echo "note: $prefix/bin is not in your PATH" ;;
esac
echo "next: ai-sandbox doctor"
