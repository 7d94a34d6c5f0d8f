# tests/vm - the CLI commands of the vm folder: `bpfrt run` and `bpfrt conformance-plugin`.
add_test(NAME vm.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vm/cli_test.sh
  $<TARGET_FILE:bpfrt_cli> ${BPFRT_SHARED_DIR}/conformance)
set_tests_properties(vm.cli PROPERTIES LABELS unit TIMEOUT 300)
