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
  # an object of 16 programs: every one loaded and pinned; and one refused in the middle
  # of 8 (bad_many's prog_5): the command fails and pins nothing
  set(many_fs ${CMAKE_BINARY_DIR}/fs-loadall-many)
  add_test(NAME object.cli_loadall_many
    COMMAND sh -c "rm -rf ${many_fs}/many ${many_fs}/bad && mkdir -p ${many_fs} && $<TARGET_FILE:bpfrt_cli> prog loadall ${CMAKE_BINARY_DIR}/progs/many_progs.bpf.o ${many_fs}/many && ls ${many_fs}/many | wc -l && ! $<TARGET_FILE:bpfrt_cli> prog loadall ${CMAKE_BINARY_DIR}/progs/bad_many.bpf.o ${many_fs}/bad && test -z \"$(ls ${many_fs}/bad 2>/dev/null)\" && echo bad-clean")
  set_tests_properties(object.cli_loadall_many PROPERTIES LABELS unit
    ENVIRONMENT BPFRT_FS=${many_fs}
    PASS_REGULAR_EXPRESSION "pinned at [^\n]*/prog_15\n16\n.*bad-clean")
  add_test(NAME object.cli_loadall_samples
    COMMAND $<TARGET_FILE:bpfrt_cli> prog loadall ${CMAKE_BINARY_DIR}/progs/samples_maps.bpf.o)
  set_tests_properties(object.cli_loadall_samples PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "loaded 'count' \\(socket_filter.*loaded 'xdp_pass' \\(xdp")
endif()

# The CO-RE oracle (test_core_oracle.c) compares with the system libbpf when there is one.
if(TARGET test_object_core_oracle)
  pkg_check_modules(BPFRT_TEST_LIBBPF_CORE IMPORTED_TARGET libbpf)
  if(BPFRT_TEST_LIBBPF_CORE_FOUND)
    target_link_libraries(test_object_core_oracle PRIVATE PkgConfig::BPFRT_TEST_LIBBPF_CORE)
    target_compile_definitions(test_object_core_oracle PRIVATE BPFRT_TEST_HAVE_LIBBPF=1)
  endif()
  # the same comparison over the CO-RE objects of the real-world corpus (docs/CORPUS.md)
  add_test(NAME object.core_corpus COMMAND test_object_core_oracle --corpus)
  set_tests_properties(object.core_corpus PROPERTIES LABELS corpus SKIP_RETURN_CODE 77
                       TIMEOUT 900 WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endif()

# The tests that compare bpfrt's loader with the system libbpf when there is one: the
# autocreate and data_past_end oracles (loads through libbpf too), struct_ops_unknown
# (libbpf's errno for its version), struct_ops_two (libbpf loads it too), kfunc_proto
# (libbpf's check of a kfunc extern's prototype).
pkg_check_modules(BPFRT_TEST_LIBBPF_OBJECT IMPORTED_TARGET libbpf)
foreach(t test_object_autocreate_oracle test_object_data_past_end_oracle
          test_object_struct_ops_unknown test_object_struct_ops_two
          test_object_kfunc_proto_oracle)
  if(TARGET ${t} AND BPFRT_TEST_LIBBPF_OBJECT_FOUND)
    target_link_libraries(${t} PRIVATE PkgConfig::BPFRT_TEST_LIBBPF_OBJECT)
    target_compile_definitions(${t} PRIVATE BPFRT_TEST_HAVE_LIBBPF=1)
  endif()
endforeach()
