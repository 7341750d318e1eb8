// AMD WMMA on gfx11 (amdgpu.wmma, wave32): each lane brings its fragments in the layout the RDNA3 ISA
// gives (lane l: row l % 16 of A and column l % 16 of B along the vector, lanes 16..31 repeating 0..15;
// element v of the accumulator is row 2v + l / 16, column l % 16), so a wrong emulated layout gives wrong
// numbers. Three 16x16x16 products, expected values computed independently (Python) when written:
// f32 += f16 x f16 (exact); f16 += f16 x f16 in the high halves of the accumulator words (subwordOffset
// 1), whose 16-bit accumulator is rounded after each pair of products as the hardware does (51 of the 256
// results differ from the exactly rounded sum); i32 += signed i8 x unsigned i8 with clamp (row 0
// saturates).
// ARCHS: gfx1100
// WRONG: the accumulator's rows laid out as v + 8 * (lane / 16), a plausible layout gfx11 does not use
// WRONG-FROM:       %stride = arith.constant 2 : index
// WRONG-FROM:       %offset = arith.constant 1 : index
// WRONG-TO:       %stride = arith.constant 1 : index
// WRONG-TO:       %offset = arith.constant 8 : index
// CHECK-LABEL: f32 from f16
// CHECK: [5.75,  -1.5,  -0.625,  -6.25,  -3.75,  -7.75,  -3.625,  -6,  -1.875,  -2.625,  3.125,  4,  11.375,  4.125,  -3.125,  -2.25]
// CHECK-NEXT: [3.875,  5.125,  9.625,  12.5,  0.75,  5.25,  -4.875,  -3.625,  -8.875,  -6,  -9.625,  -5.125,  -7.125,  2.25,  3.5,  8]
// CHECK-NEXT: [-4.875,  -3.375,  -3.5,  -0.375,  1.125,  5.875,  9,  5.625,  0.625,  -1.125,  -4.5,  -4.625,  -6.375,  -6.5,  -5,  -5.125]
// CHECK-NEXT: [-5.375,  -3.625,  -8.375,  -5,  -8.125,  -3.125,  -4.625,  5.25,  0.5,  12,  8.875,  4.125,  2.625,  -7,  -5.25,  -10]
// CHECK-NEXT: [13.375,  5.75,  4.625,  -1.375,  -0.875,  -5.25,  -3.125,  -7.5,  -3.75,  -6.5,  -1.125,  -2.25,  4.75,  11.75,  4.125,  3]
// CHECK-NEXT: [-3.625,  6.875,  1.125,  13.25,  9.125,  5,  2.5,  -6.5,  -2.5,  -9.875,  -4.25,  -10,  -2.75,  -5.25,  5.25,  -0.5]
// CHECK-NEXT: [-5.5,  -4.375,  -6.5,  -3.75,  -4.25,  0.125,  1.25,  13.75,  8.375,  4.625,  0.875,  -1.25,  -3.375,  -7.125,  -6,  -8.125]
// CHECK-NEXT: [0.875,  -6,  -3.125,  -8.375,  -3.875,  -7.5,  -1.375,  -1.75,  2.75,  4,  10.125,  13,  2.875,  -0.75,  -7.625,  -4.75]
// CHECK-NEXT: [4.5,  14.375,  11.25,  4.875,  3.375,  -1.375,  -1.25,  -7.625,  -4.25,  -9,  -4,  -7.125,  -0.5,  2.875,  12.75,  9.625]
// CHECK-NEXT: [-1.5,  0.375,  2.25,  5.75,  9.25,  14.375,  1.625,  0.25,  -4.375,  -4.125,  -7.125,  -5.25,  -6.625,  -3.125,  -1.25,  0.625]
// CHECK-NEXT: [-0.625,  -8.125,  -2.625,  -8.5,  -1.375,  -5.625,  3.125,  5.375,  9.25,  13.125,  0.75,  6.25,  -4.5,  -2.25,  -9.75,  -4.25]
// CHECK-NEXT: [7.125,  -0.125,  0.75,  -4.875,  -2.375,  -6.375,  -2.25,  -4.625,  -0.5,  -1.25,  4.5,  5.375,  12.75,  5.5,  -1.75,  -0.875]
// CHECK-NEXT: [5.25,  6.5,  11,  13.875,  2.125,  6.625,  -3.5,  -2.25,  -7.5,  -4.625,  -8.25,  -3.75,  -5.75,  3.625,  4.875,  9.375]
// CHECK-NEXT: [-3.5,  -2,  -2.125,  1,  2.5,  7.25,  10.375,  7,  2,  0.25,  -3.125,  -3.25,  -5,  -5.125,  -3.625,  -3.75]
// CHECK-NEXT: [-4,  -2.25,  -7,  -3.625,  -6.75,  -1.75,  -3.25,  6.625,  1.875,  13.375,  10.25,  5.5,  4,  -5.625,  -3.875,  -8.625]
// CHECK-NEXT: [14.75,  7.125,  6,  0,  0.5,  -3.875,  -1.75,  -6.125,  -2.375,  -5.125,  0.25,  -0.875,  6.125,  13.125,  5.5,  4.375]
// CHECK-LABEL: f16 from f16, high halves
// CHECK: [2720,  2968,  3216,  3464,  3712,  3960,  4208,  4456,  4704,  4952,  5200,  5448,  5696,  5944,  6192,  6440]
// CHECK-NEXT: [2856,  3120,  3384,  3648,  3912,  4176,  4440,  4704,  4968,  5232,  5496,  5760,  6024,  6292,  6556,  6820]
// CHECK-NEXT: [2992,  3272,  3552,  3832,  4112,  4392,  4672,  4952,  5232,  5512,  5792,  6072,  6352,  6632,  6912,  7192]
// CHECK-NEXT: [3128,  3424,  3720,  4016,  4312,  4608,  4904,  5200,  5496,  5792,  6084,  6380,  6676,  6972,  7268,  7564]
// CHECK-NEXT: [3264,  3576,  3888,  4200,  4512,  4824,  5136,  5448,  5760,  6072,  6384,  6696,  7008,  7320,  7632,  7944]
// CHECK-NEXT: [3400,  3728,  4056,  4384,  4712,  5040,  5368,  5696,  6028,  6356,  6684,  7012,  7340,  7668,  7996,  8320]
// CHECK-NEXT: [3536,  3880,  4224,  4568,  4912,  5256,  5600,  5944,  6288,  6632,  6976,  7320,  7664,  8008,  8352,  8696]
// CHECK-NEXT: [3672,  4032,  4392,  4752,  5112,  5472,  5828,  6188,  6548,  6908,  7268,  7628,  7988,  8352,  8712,  9072]
// CHECK-NEXT: [3808,  4184,  4560,  4936,  5312,  5688,  6064,  6440,  6816,  7192,  7568,  7944,  8320,  8696,  9072,  9448]
// CHECK-NEXT: [3944,  4336,  4728,  5120,  5512,  5908,  6300,  6692,  7084,  7476,  7868,  8256,  8648,  9040,  9432,  9824]
// CHECK-NEXT: [4080,  4488,  4896,  5304,  5712,  6120,  6528,  6936,  7344,  7752,  8160,  8568,  8976,  9384,  9792,  10200]
// CHECK-NEXT: [4216,  4640,  5064,  5488,  5908,  6332,  6756,  7180,  7604,  8028,  8456,  8880,  9304,  9728,  10152,  10576]
// CHECK-NEXT: [4352,  4792,  5232,  5672,  6112,  6552,  6992,  7432,  7872,  8312,  8752,  9192,  9632,  10064,  10512,  10960]
// CHECK-NEXT: [4488,  4944,  5400,  5860,  6316,  6772,  7228,  7684,  8140,  8592,  9048,  9504,  9960,  10416,  10872,  11328]
// CHECK-NEXT: [4624,  5096,  5568,  6040,  6512,  6984,  7456,  7928,  8400,  8872,  9344,  9816,  10296,  10752,  11224,  11704]
// CHECK-NEXT: [4760,  5248,  5736,  6220,  6708,  7196,  7684,  8172,  8664,  9152,  9640,  10128,  10616,  11104,  11592,  12080]
// CHECK-LABEL: i32 from i8 x u8, clamped
// CHECK: [2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647,  2147483647]
// CHECK-NEXT: [5308,  3541,  2542,  775,  -992,  825,  -19886,  -15253,  -17020,  -25699,  -27466,  -30513,  -32280,  -29695,  -31462,  -40909]
// CHECK-NEXT: [67764,  73694,  70920,  76850,  82780,  82822,  60336,  63194,  69124,  49198,  55128,  40834,  46764,  38102,  44032,  32810]
// CHECK-NEXT: [45996,  52967,  41762,  48733,  55704,  47315,  81934,  76361,  83332,  111039,  118010,  85813,  92784,  66219,  73190,  53537]
// CHECK-NEXT: [29092,  30448,  4156,  5512,  6868,  -16608,  2924,  -17736,  -16380,  -13232,  -11876,  -3096,  -1740,  12672,  14028,  44824]
// CHECK-NEXT: [-21092,  -22023,  5462,  4531,  3600,  33901,  41674,  9255,  8324,  -9759,  -10690,  -23141,  -24072,  -30891,  -31822,  -12785]
// CHECK-NEXT: [-69996,  -73214,  -57488,  -60706,  -63924,  -45382,  -49368,  -28010,  -31228,  -5006,  -8224,  23630,  20412,  -7638,  -10856,  -3578]
// CHECK-NEXT: [-52084,  -60917,  -60278,  -69111,  -77944,  -74489,  -93562,  -87291,  -96124,  -94461,  -103294,  -95999,  -104832,  -91905,  -100738,  -108547]
// CHECK-NEXT: [10372,  9236,  8100,  6964,  5828,  7508,  -13340,  -8844,  -9980,  -19564,  -20700,  -24652,  -25788,  -24108,  -25244,  -34828]
// CHECK-NEXT: [72828,  79389,  76478,  83039,  89600,  89505,  66882,  69603,  76164,  55333,  61894,  46695,  53256,  43689,  50250,  38891]
// CHECK-NEXT: [20084,  24358,  9688,  13962,  18236,  6382,  37536,  28498,  32772,  56246,  60520,  89626,  93900,  63102,  67376,  44258]
// CHECK-NEXT: [34156,  36143,  9714,  11701,  13688,  -9925,  9470,  -11327,  -9340,  -7097,  -5110,  2765,  4752,  18259,  20246,  50905]
// CHECK-NEXT: [-16028,  -16328,  11020,  10720,  10420,  40584,  48220,  15664,  15364,  -3624,  -3924,  -17280,  -17580,  -25304,  -25604,  -6704]
// CHECK-NEXT: [-87204,  -93119,  -80858,  -86773,  -92688,  -77611,  -85062,  -67169,  -73084,  -51095,  -57010,  -29389,  -35304,  -2051,  -7966,  -4153]
// CHECK-NEXT: [-47020,  -55222,  -54720,  -62922,  -71124,  -67806,  -87016,  -80882,  -89084,  -88326,  -96528,  -90138,  -98340,  -86318,  -94520,  -102466]
// CHECK-NEXT: [15436,  14931,  13658,  13153,  12648,  14191,  -6794,  -2435,  -2940,  -13429,  -13934,  -18791,  -19296,  -18521,  -19026,  -28747]
module attributes {gpu.container_module} {
  gpu.module @k {
    // Row of the C/D matrix that element v of a lane's accumulator holds (gfx11, wave32).
    func.func @fragment_row(%v: index, %lane: index) -> index {
      %stride = arith.constant 2 : index
      %offset = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %half = arith.divui %lane, %c16 : index
      %along = arith.muli %v, %stride : index
      %across = arith.muli %half, %offset : index
      %row = arith.addi %along, %across : index
      return %row : index
    }
    // D = A x B + C in f32 from f16: lane l gives row l % 16 of A and column l % 16 of B (row l % 16 of Bt).
    gpu.func @mma_f32(%a: memref<16x16xf16>, %bt: memref<16x16xf16>, %c: memref<16x16xf32>,
                      %d: memref<16x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %lane = gpu.thread_id x
      %col = arith.remui %lane, %c16 : index
      %av = vector.load %a[%col, %c0] : memref<16x16xf16>, vector<16xf16>
      %bv = vector.load %bt[%col, %c0] : memref<16x16xf16>, vector<16xf16>
      %zero = arith.constant dense<0.0> : vector<8xf32>
      %cv = scf.for %v = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (vector<8xf32>) {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %x = memref.load %c[%row, %col] : memref<16x16xf32>
        %next = vector.insert %x, %acc[%v] : f32 into vector<8xf32>
        scf.yield %next : vector<8xf32>
      }
      %dv = amdgpu.wmma 16x16x16 %av * %bv + %cv : vector<16xf16>, vector<16xf16>, vector<8xf32>
      scf.for %v = %c0 to %c8 step %c1 {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %x = vector.extract %dv[%v] : f32 from vector<8xf32>
        memref.store %x, %d[%row, %col] : memref<16x16xf32>
      }
      gpu.return
    }
    // The same in f16, in the high halves of the accumulator's words (subwordOffset = 1).
    gpu.func @mma_f16(%a: memref<16x16xf16>, %bt: memref<16x16xf16>, %c: memref<16x16xf16>,
                      %d: memref<16x16xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %lane = gpu.thread_id x
      %col = arith.remui %lane, %c16 : index
      %av = vector.load %a[%col, %c0] : memref<16x16xf16>, vector<16xf16>
      %bv = vector.load %bt[%col, %c0] : memref<16x16xf16>, vector<16xf16>
      %zero = arith.constant dense<0.0> : vector<16xf16>
      %cv = scf.for %v = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (vector<16xf16>) {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %x = memref.load %c[%row, %col] : memref<16x16xf16>
        %even = arith.muli %v, %c2 : index
        %high = arith.addi %even, %c1 : index
        %next = vector.insert %x, %acc[%high] : f16 into vector<16xf16>
        scf.yield %next : vector<16xf16>
      }
      %dv = amdgpu.wmma 16x16x16 %av * %bv + %cv {subwordOffset = 1 : i32}
        : vector<16xf16>, vector<16xf16>, vector<16xf16>
      scf.for %v = %c0 to %c8 step %c1 {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %even = arith.muli %v, %c2 : index
        %high = arith.addi %even, %c1 : index
        %x = vector.extract %dv[%high] : f16 from vector<16xf16>
        memref.store %x, %d[%row, %col] : memref<16x16xf16>
      }
      gpu.return
    }
    // i32 from signed i8 A and unsigned i8 B, saturating (clamp).
    gpu.func @mma_i8(%a: memref<16x16xi8>, %bt: memref<16x16xi8>, %c: memref<16x16xi32>,
                     %d: memref<16x16xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %lane = gpu.thread_id x
      %col = arith.remui %lane, %c16 : index
      %av = vector.load %a[%col, %c0] : memref<16x16xi8>, vector<16xi8>
      %bv = vector.load %bt[%col, %c0] : memref<16x16xi8>, vector<16xi8>
      %zero = arith.constant dense<0> : vector<8xi32>
      %cv = scf.for %v = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (vector<8xi32>) {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %x = memref.load %c[%row, %col] : memref<16x16xi32>
        %next = vector.insert %x, %acc[%v] : i32 into vector<8xi32>
        scf.yield %next : vector<8xi32>
      }
      %dv = amdgpu.wmma 16x16x16 %av * %bv + %cv {unsignedB, clamp} : vector<16xi8>, vector<16xi8>, vector<8xi32>
      scf.for %v = %c0 to %c8 step %c1 {
        %row = func.call @fragment_row(%v, %lane) : (index, index) -> index
        %x = vector.extract %dv[%v] : i32 from vector<8xi32>
        memref.store %x, %d[%row, %col] : memref<16x16xi32>
      }
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<16x16xf16>
    %hbt = memref.alloc() : memref<16x16xf16>
    %hc = memref.alloc() : memref<16x16xf32>
    %ha2 = memref.alloc() : memref<16x16xf16>
    %hbt2 = memref.alloc() : memref<16x16xf16>
    %hc2 = memref.alloc() : memref<16x16xf16>
    %ha3 = memref.alloc() : memref<16x16xi8>
    %hbt3 = memref.alloc() : memref<16x16xi8>
    %hc3 = memref.alloc() : memref<16x16xi32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %ii = arith.index_cast %i : index to i32
        %jj = arith.index_cast %j : index to i32
        %n1 = arith.constant 1 : i32
        %n2 = arith.constant 2 : i32
        %n3 = arith.constant 3 : i32
        %n5 = arith.constant 5 : i32
        %n6 = arith.constant 6 : i32
        %n7 = arith.constant 7 : i32
        %n8 = arith.constant 8 : i32
        %n11 = arith.constant 11 : i32
        %n13 = arith.constant 13 : i32
        %n29 = arith.constant 29 : i32
        %n37 = arith.constant 37 : i32
        %n100 = arith.constant 100 : i32
        %n128 = arith.constant 128 : i32
        %n256 = arith.constant 256 : i32
        %quarter = arith.constant 0.25 : f32
        %half = arith.constant 0.5 : f32
        %eighth = arith.constant 0.125 : f32
        // A[i][k=j] = ((3i + 5k) % 11 - 5) / 2, Bt[n=i][k=j] = ((7n + 3k) % 13 - 6) / 4, C[i][j] = (i - j) / 8
        %i3 = arith.muli %ii, %n3 : i32
        %j5 = arith.muli %jj, %n5 : i32
        %s1 = arith.addi %i3, %j5 : i32
        %m1 = arith.remui %s1, %n11 : i32
        %a1 = arith.subi %m1, %n5 : i32
        %af = arith.sitofp %a1 : i32 to f32
        %ah = arith.mulf %af, %half : f32
        %a = arith.truncf %ah : f32 to f16
        memref.store %a, %ha[%i, %j] : memref<16x16xf16>
        %i7 = arith.muli %ii, %n7 : i32
        %j3 = arith.muli %jj, %n3 : i32
        %s2 = arith.addi %i7, %j3 : i32
        %m2 = arith.remui %s2, %n13 : i32
        %b1 = arith.subi %m2, %n6 : i32
        %bf = arith.sitofp %b1 : i32 to f32
        %bq = arith.mulf %bf, %quarter : f32
        %b = arith.truncf %bq : f32 to f16
        memref.store %b, %hbt[%i, %j] : memref<16x16xf16>
        %d1 = arith.subi %ii, %jj : i32
        %df = arith.sitofp %d1 : i32 to f32
        %c = arith.mulf %df, %eighth : f32
        memref.store %c, %hc[%i, %j] : memref<16x16xf32>
        // A2[i][k] = i + 2k, Bt2[n][k] = k + n + 1, C2[i][j] = 8j
        %j2 = arith.muli %jj, %n2 : i32
        %a2i = arith.addi %ii, %j2 : i32
        %a2 = arith.sitofp %a2i : i32 to f16
        memref.store %a2, %ha2[%i, %j] : memref<16x16xf16>
        %ij = arith.addi %ii, %jj : i32
        %b2i = arith.addi %ij, %n1 : i32
        %b2 = arith.sitofp %b2i : i32 to f16
        memref.store %b2, %hbt2[%i, %j] : memref<16x16xf16>
        %c2i = arith.muli %jj, %n8 : i32
        %c2 = arith.sitofp %c2i : i32 to f16
        memref.store %c2, %hc2[%i, %j] : memref<16x16xf16>
        // A3[i][k] = 100 in row 0, else (37i + 11k) % 256 - 128; Bt3[n][k] = (29k + 13n) % 256 (unsigned);
        // C3[i][j] = 2147480000 in row 0, else ij - 100
        %i37 = arith.muli %ii, %n37 : i32
        %j11 = arith.muli %jj, %n11 : i32
        %s3 = arith.addi %i37, %j11 : i32
        %m3 = arith.remui %s3, %n256 : i32
        %a3w = arith.subi %m3, %n128 : i32
        %first = arith.cmpi eq, %i, %c0 : index
        %a3s = arith.select %first, %n100, %a3w : i32
        %a3 = arith.trunci %a3s : i32 to i8
        memref.store %a3, %ha3[%i, %j] : memref<16x16xi8>
        %k29 = arith.muli %jj, %n29 : i32
        %n13i = arith.muli %ii, %n13 : i32
        %s4 = arith.addi %k29, %n13i : i32
        %m4 = arith.remui %s4, %n256 : i32
        %b3 = arith.trunci %m4 : i32 to i8
        memref.store %b3, %hbt3[%i, %j] : memref<16x16xi8>
        %prod = arith.muli %ii, %jj : i32
        %c3w = arith.subi %prod, %n100 : i32
        %big = arith.constant 2147480000 : i32
        %c3 = arith.select %first, %big, %c3w : i32
        memref.store %c3, %hc3[%i, %j] : memref<16x16xi32>
      }
    }
    %a = gpu.alloc() : memref<16x16xf16>
    %bt = gpu.alloc() : memref<16x16xf16>
    %c = gpu.alloc() : memref<16x16xf32>
    %d = gpu.alloc() : memref<16x16xf32>
    gpu.memcpy %a, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %bt, %hbt : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %c, %hc : memref<16x16xf32>, memref<16x16xf32>
    gpu.launch_func @k::@mma_f32 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<16x16xf16>, %bt : memref<16x16xf16>, %c : memref<16x16xf32>, %d : memref<16x16xf32>)
    %hd = memref.alloc() : memref<16x16xf32>
    gpu.memcpy %hd, %d : memref<16x16xf32>, memref<16x16xf32>
    vector.print str "f32 from f16\n"
    %u1 = memref.cast %hd : memref<16x16xf32> to memref<*xf32>
    call @printMemrefF32(%u1) : (memref<*xf32>) -> ()

    %a2 = gpu.alloc() : memref<16x16xf16>
    %bt2 = gpu.alloc() : memref<16x16xf16>
    %c2 = gpu.alloc() : memref<16x16xf16>
    %d2 = gpu.alloc() : memref<16x16xf16>
    gpu.memcpy %a2, %ha2 : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %bt2, %hbt2 : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %c2, %hc2 : memref<16x16xf16>, memref<16x16xf16>
    gpu.launch_func @k::@mma_f16 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a2 : memref<16x16xf16>, %bt2 : memref<16x16xf16>, %c2 : memref<16x16xf16>, %d2 : memref<16x16xf16>)
    %hd2 = memref.alloc() : memref<16x16xf16>
    gpu.memcpy %hd2, %d2 : memref<16x16xf16>, memref<16x16xf16>
    %wide = memref.alloc() : memref<16x16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %hd2[%i, %j] : memref<16x16xf16>
        %y = arith.extf %x : f16 to f32
        memref.store %y, %wide[%i, %j] : memref<16x16xf32>
      }
    }
    vector.print str "f16 from f16, high halves\n"
    %u2 = memref.cast %wide : memref<16x16xf32> to memref<*xf32>
    call @printMemrefF32(%u2) : (memref<*xf32>) -> ()

    %a3 = gpu.alloc() : memref<16x16xi8>
    %bt3 = gpu.alloc() : memref<16x16xi8>
    %c3 = gpu.alloc() : memref<16x16xi32>
    %d3 = gpu.alloc() : memref<16x16xi32>
    gpu.memcpy %a3, %ha3 : memref<16x16xi8>, memref<16x16xi8>
    gpu.memcpy %bt3, %hbt3 : memref<16x16xi8>, memref<16x16xi8>
    gpu.memcpy %c3, %hc3 : memref<16x16xi32>, memref<16x16xi32>
    gpu.launch_func @k::@mma_i8 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a3 : memref<16x16xi8>, %bt3 : memref<16x16xi8>, %c3 : memref<16x16xi32>, %d3 : memref<16x16xi32>)
    %hd3 = memref.alloc() : memref<16x16xi32>
    gpu.memcpy %hd3, %d3 : memref<16x16xi32>, memref<16x16xi32>
    vector.print str "i32 from i8 x u8, clamped\n"
    %u3 = memref.cast %hd3 : memref<16x16xi32> to memref<*xi32>
    call @printMemrefI32(%u3) : (memref<*xi32>) -> ()
    return
  }
}
