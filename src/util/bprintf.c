/* bprintf.c - the kernel's format language of bpf_trace_printk, bpf_trace_vprintk,
 * bpf_seq_printf and bpf_snprintf (bpf_bprintf_prepare(), kernel/bpf/helpers.c), read
 * once here for both users: the verifier, which checks a constant format of bpf_snprintf
 * at load time as check_bpf_snprintf_call() does, and the helpers, which format with it
 * at run time (trace/printk.c).
 */
#include <ctype.h>
#include <errno.h>

#include "util/util.h"

/* what may follow %s, %pks/%pus and a bare %p: the end, a space or punctuation */
static int ends_word(char c)
{
	return !c || isspace((unsigned char)c) || ispunct((unsigned char)c);
}

int brt_bprintf_char_ok(unsigned char c)
{
	/* Linux 6.18.44 takes any byte above 0x7f (UTF-8 text); 6.18.14 still refused them */
	return c >= 0x80 || isprint(c) || isspace(c);
}

int brt_bprintf_spec(const char *fmt, size_t i, struct brt_bprintf_spec *s)
{
	s->start = i++;
	/* optional "[0 +-][num]" flags and width */
	while (fmt[i] == '0' || fmt[i] == '+' || fmt[i] == '-' || fmt[i] == ' ')
		i++;
	if (fmt[i] >= '1' && fmt[i] <= '9')
		while (fmt[i] >= '0' && fmt[i] <= '9')
			i++;
	s->width_end = i;
	s->letter = fmt[i];
	if (fmt[i] == 'p') {
		char next = fmt[i + 1];

		s->end = i + 1;
		s->kind = BRT_BPF_PTR;
		if (ends_word(next))
			return 0;
		if ((next == 'k' || next == 'u') && fmt[i + 2] == 's') {
			s->kind = BRT_BPF_STR;
			s->end = i + 3;
			return ends_word(fmt[i + 3]) ? 0 : -EINVAL;
		}
		if (next == 'K' || next == 'x' || next == 's' || next == 'S' || next == 'B') {
			s->end = i + 2;
			return 0;
		}
		/* only %pI4, %pi4, %pI6 and %pi6 of the address formats */
		if ((next != 'i' && next != 'I') || (fmt[i + 2] != '4' && fmt[i + 2] != '6'))
			return -EINVAL;
		s->kind = fmt[i + 2] == '4' ? BRT_BPF_IP4 : BRT_BPF_IP6;
		s->letter = next;
		s->end = i + 3;
		return 0;
	}
	if (fmt[i] == 's') {
		s->kind = BRT_BPF_STR;
		s->end = i + 1;
		return ends_word(fmt[i + 1]) ? 0 : -EINVAL;
	}
	if (fmt[i] == 'c') {
		s->kind = BRT_BPF_CHAR;
		s->end = i + 1;
		return 0;
	}
	s->kind = BRT_BPF_INT;
	if (fmt[i] == 'l') {
		s->kind = BRT_BPF_LONG;
		i++;
		if (fmt[i] == 'l')
			i++;
	}
	s->letter = fmt[i];
	if (!fmt[i] || !strchr("iduxX", fmt[i]))
		return -EINVAL;
	s->end = i + 1;
	return 0;
}

int brt_bprintf_check(const char *fmt, size_t fmt_size, uint32_t num_args)
{
	const char *nul = memchr(fmt, 0, fmt_size);
	uint32_t nspec = 0;

	if (!nul)
		return -EINVAL;
	for (size_t i = 0, len = (size_t)(nul - fmt); i < len; i++) {
		unsigned char c = (unsigned char)fmt[i];
		struct brt_bprintf_spec s;

		if (!brt_bprintf_char_ok(c))
			return -EINVAL;
		if (c != '%')
			continue;
		if (fmt[i + 1] == '%') {
			i++;
			continue;
		}
		if (nspec >= num_args || brt_bprintf_spec(fmt, i, &s))
			return -EINVAL;
		nspec++;
		i = s.end - 1;
	}
	return 0;
}
