# ctest install_no_lto (issue 21 §5): install this build into a scratch prefix and check that the
# installed libtalus.a carries no LTO bytecode (no .gnu.lto_* section), so a user's program links it
# without a whole-engine link-time optimization. Arguments: -DBUILD= -DPREFIX= -DOBJDUMP= -DLIB=
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD} failed (${rc})")
endif()
set(lib "${PREFIX}/${LIB}")
if(NOT EXISTS "${lib}")
  message(FATAL_ERROR "the install has no ${LIB}")
endif()
execute_process(COMMAND "${OBJDUMP}" -h "${lib}" OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sections MATCHES "\\.text")
  message(FATAL_ERROR "objdump -h ${lib} failed or shows no code")
endif()
string(REGEX MATCHALL "\\.gnu\\.lto_[^ \n]*" lto "${sections}")
list(LENGTH lto n)
if(n GREATER 0)
  message(FATAL_ERROR "the installed ${lib} holds ${n} LTO bytecode sections: every program linking it is "
                      "link-time optimized")
endif()
message(STATUS "installed ${lib}: machine code only, no LTO bytecode")
file(REMOVE_RECURSE "${PREFIX}")
