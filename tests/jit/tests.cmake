# bpfrt jit: the dump names each eBPF instruction and shows the code after it.
add_test(NAME jit.cli_dump
  COMMAND bpfrt_cli jit ${BPFRT_SHARED_DIR}/conformance/tests/callx.data --opcodes)
set_tests_properties(jit.cli_dump PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "; main program at insn 0.*2: \\(8d\\) callx r2\n.*call rax.*; shared exits")
