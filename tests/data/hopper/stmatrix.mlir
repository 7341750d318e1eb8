// stmatrix (nvvm.stmatrix m8n8 b16): one warp stores four 8x8 matrices (x4) row by row and two (x2) with
// .trans into shared memory, lane l giving the address of row l % 8 of matrix l / 8; lane l's register i
// holds elements (l / 4, 2 (l % 4) + {0, 1}) of matrix i, as 1000 i + 8 row + column (the registers of
// matrix i + 1 add 1000 to both halves). Expected (computed in Python from the PTX ISA's fragment layout):
// rows[i][r][c] = 1000 i + 8 r + c, cols[i][a][b] = 1000 i + 8 b + a. nvvm.setmaxregister around it does
// nothing visible.
// ARCHS: sm_90a
// WRONG: the .x2 store without .trans (its matrices stored as rows)
// WRONG-FROM:       nvvm.stmatrix %cols_ptr, %reg0, %reg1 {layout = #nvvm.mma_layout<col>,
// WRONG-TO:       nvvm.stmatrix %cols_ptr, %reg0, %reg1 {layout = #nvvm.mma_layout<row>,
// CHECK: sizes = [256]
// CHECK-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023, 1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 1032, 1033, 1034, 1035, 1036, 1037, 1038, 1039, 1040, 1041, 1042, 1043, 1044, 1045, 1046, 1047, 1048, 1049, 1050, 1051, 1052, 1053, 1054, 1055, 1056, 1057, 1058, 1059, 1060, 1061, 1062, 1063, 2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022, 2023, 2024, 2025, 2026, 2027, 2028, 2029, 2030, 2031, 2032, 2033, 2034, 2035, 2036, 2037, 2038, 2039, 2040, 2041, 2042, 2043, 2044, 2045, 2046, 2047, 2048, 2049, 2050, 2051, 2052, 2053, 2054, 2055, 2056, 2057, 2058, 2059, 2060, 2061, 2062, 2063, 3000, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008, 3009, 3010, 3011, 3012, 3013, 3014, 3015, 3016, 3017, 3018, 3019, 3020, 3021, 3022, 3023, 3024, 3025, 3026, 3027, 3028, 3029, 3030, 3031, 3032, 3033, 3034, 3035, 3036, 3037, 3038, 3039, 3040, 3041, 3042, 3043, 3044, 3045, 3046, 3047, 3048, 3049, 3050, 3051, 3052, 3053, 3054, 3055, 3056, 3057, 3058, 3059, 3060, 3061, 3062, 3063]
// CHECK: sizes = [128]
// CHECK-NEXT: [0, 8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57, 2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59, 4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61, 6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63, 1000, 1008, 1016, 1024, 1032, 1040, 1048, 1056, 1001, 1009, 1017, 1025, 1033, 1041, 1049, 1057, 1002, 1010, 1018, 1026, 1034, 1042, 1050, 1058, 1003, 1011, 1019, 1027, 1035, 1043, 1051, 1059, 1004, 1012, 1020, 1028, 1036, 1044, 1052, 1060, 1005, 1013, 1021, 1029, 1037, 1045, 1053, 1061, 1006, 1014, 1022, 1030, 1038, 1046, 1054, 1062, 1007, 1015, 1023, 1031, 1039, 1047, 1055, 1063]
module attributes {gpu.container_module} {
  gpu.module @k {
    memref.global "private" @rows : memref<256xi16, 3> {alignment = 16 : i64}
    memref.global "private" @cols : memref<128xi16, 3> {alignment = 16 : i64}
    gpu.func @store(%out: memref<256xi32>, %tout: memref<128xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      nvvm.setmaxregister increase 232
      %tid = gpu.thread_id x
      %lane = index.casts %tid : index to i32
      %c2 = arith.constant 2 : i32
      %c4 = arith.constant 4 : i32
      %c8 = arith.constant 8 : i32
      %c16 = arith.constant 16 : i32
      %c1000 = arith.constant 1000 : i32
      %r = arith.divui %lane, %c4 : i32
      %t = arith.remui %lane, %c4 : i32
      %r8 = arith.muli %r, %c8 : i32
      %t2 = arith.muli %t, %c2 : i32
      %lo0 = arith.addi %r8, %t2 : i32
      %one = arith.constant 1 : i32
      %hi0 = arith.addi %lo0, %one : i32
      %hi0s = arith.shli %hi0, %c16 : i32
      %reg0 = arith.ori %lo0, %hi0s : i32
      %step = arith.constant 65537000 : i32
      %reg1 = arith.addi %reg0, %step : i32
      %reg2 = arith.addi %reg1, %step : i32
      %reg3 = arith.addi %reg2, %step : i32
      // lane l gives the address of row l % 8 of matrix l / 8 (16 bytes a row, 128 a matrix)
      %m = arith.divui %lane, %c8 : i32
      %mr = arith.remui %lane, %c8 : i32
      %c128i = arith.constant 128 : i32
      %mo = arith.muli %m, %c128i : i32
      %ro = arith.muli %mr, %c16 : i32
      %off = arith.addi %mo, %ro : i32
      %off64 = arith.extui %off : i32 to i64
      %rows = memref.get_global @rows : memref<256xi16, 3>
      %cols = memref.get_global @cols : memref<128xi16, 3>
      %rows_index = memref.extract_aligned_pointer_as_index %rows : memref<256xi16, 3> -> index
      %cols_index = memref.extract_aligned_pointer_as_index %cols : memref<128xi16, 3> -> index
      %rows_i64 = arith.index_cast %rows_index : index to i64
      %cols_i64 = arith.index_cast %cols_index : index to i64
      %rows_at = arith.addi %rows_i64, %off64 : i64
      %cols_at = arith.addi %cols_i64, %off64 : i64
      %rows_ptr = llvm.inttoptr %rows_at : i64 to !llvm.ptr<3>
      %cols_ptr = llvm.inttoptr %cols_at : i64 to !llvm.ptr<3>
      nvvm.stmatrix %rows_ptr, %reg0, %reg1, %reg2, %reg3 {layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : !llvm.ptr<3>, i32, i32, i32, i32
      nvvm.stmatrix %cols_ptr, %reg0, %reg1 {layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : !llvm.ptr<3>, i32, i32
      nvvm.setmaxregister decrease 40
      gpu.barrier
      %leader = arith.cmpi eq, %tid, %c0 : index
      scf.if %leader {
        scf.for %i = %c0 to %c256 step %c1 {
          %v = memref.load %rows[%i] : memref<256xi16, 3>
          %w = arith.extui %v : i16 to i32
          memref.store %w, %out[%i] : memref<256xi32>
        }
        scf.for %i = %c0 to %c128 step %c1 {
          %v = memref.load %cols[%i] : memref<128xi16, 3>
          %w = arith.extui %v : i16 to i32
          memref.store %w, %tout[%i] : memref<128xi32>
        }
      }
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %out = gpu.alloc () : memref<256xi32>
    %tout = gpu.alloc () : memref<128xi32>
    gpu.launch_func @k::@store blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%out : memref<256xi32>, %tout : memref<128xi32>)
    %h = memref.alloc () : memref<256xi32>
    %th = memref.alloc () : memref<128xi32>
    gpu.memcpy %h, %out : memref<256xi32>, memref<256xi32>
    gpu.memcpy %th, %tout : memref<128xi32>, memref<128xi32>
    %u = memref.cast %h : memref<256xi32> to memref<*xi32>
    %tu = memref.cast %th : memref<128xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    call @printMemrefI32(%tu) : (memref<*xi32>) -> ()
    return
  }
}
