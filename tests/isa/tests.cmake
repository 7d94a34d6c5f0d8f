# tests/isa - the asm and disasm CLI commands, driven by a shell script (label unit).
add_test(NAME isa.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/isa/cli_asm_disasm.sh
  $<TARGET_FILE:bpfrt_cli> ${BPFRT_SHARED_DIR})
set_tests_properties(isa.cli PROPERTIES LABELS unit TIMEOUT 300)
