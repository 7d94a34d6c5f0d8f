# bpfrt.bash - bash completion for the bpfrt command-line tool.  The commands, their verbs
# ("prog load", "object show", "map dump", ...) and their long options come from the
# installed binary's own --help, so they never drift from tools/bpfrt/commands.def.
# Installed as share/bash-completion/completions/bpfrt by `cmake --install`.

# The words after "bpfrt CMD " at the start of --help's usage lines: the command's verbs.
_bpfrt_verbs()
{
	"$1" "$2" --help 2>/dev/null |
		sed -n -E "s/^(Usage: +bpfrt|[[:space:]]*(bpfrt)?)[[:space:]]*(\[[^]]*\][[:space:]]*)*$2 +([a-z][a-z_-]*).*/\4/p" |
		sort -u
}

_bpfrt()
{
	local cur prev bin cmd i verb
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	bin=${COMP_WORDS[0]}
	cmd=""
	verb=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${COMP_WORDS[i]}
			elif [[ -z $verb ]]; then
				verb=${COMP_WORDS[i]}
			fi
			;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-j --json -p --pretty -h --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$bin" --help 2>/dev/null |
				sed -n -E 's/^  ([a-z][a-z-]*) +.*/\1/p')" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$bin" "$cmd" --help 2>/dev/null |
			grep -oE -- '--[a-z][a-z-]*' | sort -u) -j -p --json --pretty" -- "$cur"))
		return
	fi
	case "$cmd $verb" in
	"prog dump")
		if [[ $prev == dump ]]; then
			COMPREPLY=($(compgen -W "xlated jited" -- "$cur"))
			return
		fi
		COMPREPLY=($(compgen -W "pinned linum opcodes" -- "$cur") $(compgen -f -- "$cur"))
		return
		;;
	"prog run")
		case $prev in
		data_in | data_out | ctx_in | ctx_out) COMPREPLY=($(compgen -f -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "pinned data_in data_out data_size_out ctx_in ctx_out \
ctx_size_out repeat" -- "$cur") $(compgen -f -- "$cur")) ;;
		esac
		return
		;;
	esac
	if [[ -z $verb ]]; then
		local verbs
		verbs=$(_bpfrt_verbs "$bin" "$cmd")
		if [[ -n $verbs ]]; then
			COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
			return
		fi
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

complete -o filenames -F _bpfrt bpfrt
