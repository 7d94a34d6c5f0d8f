# tests/object/tests.cmake - extra runs of the object loader tests (the corpus is compiled by
# tests/elf/tests.cmake, which is included first).
# The corpus on the other engines too (BPFRT_ENGINE picks the engine at BPF_PROG_LOAD):
# callbacks and tail calls cross engine-specific code.
set(BPFRT_OBJECT_ENGINES interp)
if(BPFRT_JIT)
  list(APPEND BPFRT_OBJECT_ENGINES jit)
endif()
foreach(engine ${BPFRT_OBJECT_ENGINES})
  add_test(NAME object.load_${engine} COMMAND test_object_load)
  set_tests_properties(object.load_${engine} PROPERTIES ENVIRONMENT BPFRT_ENGINE=${engine}
                       LABELS unit SKIP_RETURN_CODE 77)
endforeach()

# `prog loadall` finds a type for every program of objects written for other loaders,
# without --type: tc's (bpf_elf_map, "classifier", "1/0", "from-container") and the kernel
# samples' ("socket1", "xdp_prog").
if(BPFRT_BPF_CLANG)
  add_test(NAME object.cli_loadall_tc
    COMMAND $<TARGET_FILE:bpfrt_cli> prog loadall ${CMAKE_BINARY_DIR}/progs/tc_elf_map.bpf.o)
  set_tests_properties(object.cli_loadall_tc PROPERTIES LABELS unit
    ENVIRONMENT BPFRT_FS=${CMAKE_BINARY_DIR}/fs-loadall-tc
    PASS_REGULAR_EXPRESSION "loaded 'cls_entry' \\(sched_cls.*loaded 'cls_tail' \\(sched_cls.*loaded 'from_container' \\(sched_cls")
  add_test(NAME object.cli_loadall_samples
    COMMAND $<TARGET_FILE:bpfrt_cli> prog loadall ${CMAKE_BINARY_DIR}/progs/samples_maps.bpf.o)
  set_tests_properties(object.cli_loadall_samples PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "loaded 'count' \\(socket_filter.*loaded 'xdp_pass' \\(xdp")
endif()
