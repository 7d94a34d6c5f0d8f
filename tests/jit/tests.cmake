# bpfrt jit: the dump names each eBPF instruction and shows the code after it (a program
# of this folder, so that the test runs without ../shared).
add_test(NAME jit.cli_dump
  COMMAND bpfrt_cli jit ${CMAKE_CURRENT_SOURCE_DIR}/jit/callx.s --opcodes)
set_tests_properties(jit.cli_dump PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "; main program at insn 0.*2: \\(8d\\) callx r2\n.*call rax.*; shared exits")

# The conformance suite again with constant blinding on in the vm's JIT engine.
add_test(NAME jit.conformance_hardened COMMAND test_conformance_conformance)
set_tests_properties(jit.conformance_hardened PROPERTIES LABELS conformance
  ENVIRONMENT BPFRT_JIT_HARDEN=1 SKIP_RETURN_CODE 77 WORKING_DIRECTORY ${CMAKE_BINARY_DIR})

# prog dump jited shows the code runs execute: map lookups bound to their maps.
if(BPFRT_BPF_CLANG)
  add_test(NAME jit.cli_dump_lookup
    COMMAND bpfrt_cli prog dump jited ${CMAKE_BINARY_DIR}/progs/mixed_maps.bpf.o sum_all)
  set_tests_properties(jit.cli_dump_lookup PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "call bpf_map_lookup_elem#1\n +; array lookup inlined\n.*; the map type's lookup, called directly")
endif()
