# Writes nvshim(1): cmake -DNVSHIM=<nvshim> -DOUT=<file> -P man.cmake
# The page comes from `nvshim help --man`, so it is made from the same tables as `nvshim help`.
get_filename_component(dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
execute_process(COMMAND "${NVSHIM}" help --man OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NVSHIM} help --man failed: ${rc}")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
