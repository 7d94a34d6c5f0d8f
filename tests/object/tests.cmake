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
