// A TMA + mbarrier pipelined copy: one block of 256 threads streams six 8x32 f32 tiles of a 20x48 matrix
// (G[r][c] = 100r + c) through two shared-memory stages with the 128-byte swizzle. Thread 0 arms each
// stage's mbarrier (arrive.expect_tx 1024 bytes) and issues the TMA load; every thread waits on the stage's
// phase parity (three phases per barrier), copies the stage's words as they lie in shared memory (the
// swizzled order) to the output, and the stage is refilled after a block barrier. Tiles cross the matrix's
// edge: rows 20..23 and columns 48..63 read as zero. The CHECK lines were computed independently (Python)
// from the PTX ISA's 128-byte swizzle: in each 1024-byte span, the 16-byte chunk index XOR the 128-byte row
// index mod 8.
// ARCHS: sm_90a
// WRONG: the tensor map without the swizzle
// WRONG-FROM: !map = !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// WRONG-TO: !map = !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK: data =
// CHECK-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK-NEXT: [104, 105, 106, 107, 100, 101, 102, 103, 112, 113, 114, 115, 108, 109, 110, 111, 120, 121, 122, 123, 116, 117, 118, 119, 128, 129, 130, 131, 124, 125, 126, 127]
// CHECK-NEXT: [208, 209, 210, 211, 212, 213, 214, 215, 200, 201, 202, 203, 204, 205, 206, 207, 224, 225, 226, 227, 228, 229, 230, 231, 216, 217, 218, 219, 220, 221, 222, 223]
// CHECK-NEXT: [312, 313, 314, 315, 308, 309, 310, 311, 304, 305, 306, 307, 300, 301, 302, 303, 328, 329, 330, 331, 324, 325, 326, 327, 320, 321, 322, 323, 316, 317, 318, 319]
// CHECK-NEXT: [416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415]
// CHECK-NEXT: [520, 521, 522, 523, 516, 517, 518, 519, 528, 529, 530, 531, 524, 525, 526, 527, 504, 505, 506, 507, 500, 501, 502, 503, 512, 513, 514, 515, 508, 509, 510, 511]
// CHECK-NEXT: [624, 625, 626, 627, 628, 629, 630, 631, 616, 617, 618, 619, 620, 621, 622, 623, 608, 609, 610, 611, 612, 613, 614, 615, 600, 601, 602, 603, 604, 605, 606, 607]
// CHECK-NEXT: [728, 729, 730, 731, 724, 725, 726, 727, 720, 721, 722, 723, 716, 717, 718, 719, 712, 713, 714, 715, 708, 709, 710, 711, 704, 705, 706, 707, 700, 701, 702, 703]
// CHECK-NEXT: [32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [136, 137, 138, 139, 132, 133, 134, 135, 144, 145, 146, 147, 140, 141, 142, 143, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [240, 241, 242, 243, 244, 245, 246, 247, 232, 233, 234, 235, 236, 237, 238, 239, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [344, 345, 346, 347, 340, 341, 342, 343, 336, 337, 338, 339, 332, 333, 334, 335, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 536, 537, 538, 539, 532, 533, 534, 535, 544, 545, 546, 547, 540, 541, 542, 543]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 640, 641, 642, 643, 644, 645, 646, 647, 632, 633, 634, 635, 636, 637, 638, 639]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 744, 745, 746, 747, 740, 741, 742, 743, 736, 737, 738, 739, 732, 733, 734, 735]
// CHECK-NEXT: [800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827, 828, 829, 830, 831]
// CHECK-NEXT: [904, 905, 906, 907, 900, 901, 902, 903, 912, 913, 914, 915, 908, 909, 910, 911, 920, 921, 922, 923, 916, 917, 918, 919, 928, 929, 930, 931, 924, 925, 926, 927]
// CHECK-NEXT: [1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023]
// CHECK-NEXT: [1112, 1113, 1114, 1115, 1108, 1109, 1110, 1111, 1104, 1105, 1106, 1107, 1100, 1101, 1102, 1103, 1128, 1129, 1130, 1131, 1124, 1125, 1126, 1127, 1120, 1121, 1122, 1123, 1116, 1117, 1118, 1119]
// CHECK-NEXT: [1216, 1217, 1218, 1219, 1220, 1221, 1222, 1223, 1224, 1225, 1226, 1227, 1228, 1229, 1230, 1231, 1200, 1201, 1202, 1203, 1204, 1205, 1206, 1207, 1208, 1209, 1210, 1211, 1212, 1213, 1214, 1215]
// CHECK-NEXT: [1320, 1321, 1322, 1323, 1316, 1317, 1318, 1319, 1328, 1329, 1330, 1331, 1324, 1325, 1326, 1327, 1304, 1305, 1306, 1307, 1300, 1301, 1302, 1303, 1312, 1313, 1314, 1315, 1308, 1309, 1310, 1311]
// CHECK-NEXT: [1424, 1425, 1426, 1427, 1428, 1429, 1430, 1431, 1416, 1417, 1418, 1419, 1420, 1421, 1422, 1423, 1408, 1409, 1410, 1411, 1412, 1413, 1414, 1415, 1400, 1401, 1402, 1403, 1404, 1405, 1406, 1407]
// CHECK-NEXT: [1528, 1529, 1530, 1531, 1524, 1525, 1526, 1527, 1520, 1521, 1522, 1523, 1516, 1517, 1518, 1519, 1512, 1513, 1514, 1515, 1508, 1509, 1510, 1511, 1504, 1505, 1506, 1507, 1500, 1501, 1502, 1503]
// CHECK-NEXT: [832, 833, 834, 835, 836, 837, 838, 839, 840, 841, 842, 843, 844, 845, 846, 847, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [936, 937, 938, 939, 932, 933, 934, 935, 944, 945, 946, 947, 940, 941, 942, 943, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1040, 1041, 1042, 1043, 1044, 1045, 1046, 1047, 1032, 1033, 1034, 1035, 1036, 1037, 1038, 1039, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1144, 1145, 1146, 1147, 1140, 1141, 1142, 1143, 1136, 1137, 1138, 1139, 1132, 1133, 1134, 1135, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1232, 1233, 1234, 1235, 1236, 1237, 1238, 1239, 1240, 1241, 1242, 1243, 1244, 1245, 1246, 1247]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1336, 1337, 1338, 1339, 1332, 1333, 1334, 1335, 1344, 1345, 1346, 1347, 1340, 1341, 1342, 1343]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1440, 1441, 1442, 1443, 1444, 1445, 1446, 1447, 1432, 1433, 1434, 1435, 1436, 1437, 1438, 1439]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1544, 1545, 1546, 1547, 1540, 1541, 1542, 1543, 1536, 1537, 1538, 1539, 1532, 1533, 1534, 1535]
// CHECK-NEXT: [1600, 1601, 1602, 1603, 1604, 1605, 1606, 1607, 1608, 1609, 1610, 1611, 1612, 1613, 1614, 1615, 1616, 1617, 1618, 1619, 1620, 1621, 1622, 1623, 1624, 1625, 1626, 1627, 1628, 1629, 1630, 1631]
// CHECK-NEXT: [1704, 1705, 1706, 1707, 1700, 1701, 1702, 1703, 1712, 1713, 1714, 1715, 1708, 1709, 1710, 1711, 1720, 1721, 1722, 1723, 1716, 1717, 1718, 1719, 1728, 1729, 1730, 1731, 1724, 1725, 1726, 1727]
// CHECK-NEXT: [1808, 1809, 1810, 1811, 1812, 1813, 1814, 1815, 1800, 1801, 1802, 1803, 1804, 1805, 1806, 1807, 1824, 1825, 1826, 1827, 1828, 1829, 1830, 1831, 1816, 1817, 1818, 1819, 1820, 1821, 1822, 1823]
// CHECK-NEXT: [1912, 1913, 1914, 1915, 1908, 1909, 1910, 1911, 1904, 1905, 1906, 1907, 1900, 1901, 1902, 1903, 1928, 1929, 1930, 1931, 1924, 1925, 1926, 1927, 1920, 1921, 1922, 1923, 1916, 1917, 1918, 1919]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1632, 1633, 1634, 1635, 1636, 1637, 1638, 1639, 1640, 1641, 1642, 1643, 1644, 1645, 1646, 1647, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1736, 1737, 1738, 1739, 1732, 1733, 1734, 1735, 1744, 1745, 1746, 1747, 1740, 1741, 1742, 1743, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1840, 1841, 1842, 1843, 1844, 1845, 1846, 1847, 1832, 1833, 1834, 1835, 1836, 1837, 1838, 1839, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1944, 1945, 1946, 1947, 1940, 1941, 1942, 1943, 1936, 1937, 1938, 1939, 1932, 1933, 1934, 1935, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!map = !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  memref.global "private" @stage0 : memref<8x32xf32, 3> {alignment = 1024 : i64}
  memref.global "private" @stage1 : memref<8x32xf32, 3> {alignment = 1024 : i64}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c20 = arith.constant 20 : index
    %c32 = arith.constant 32 : index
    %c48 = arith.constant 48 : index
    %c100 = arith.constant 100 : index
    %c256 = arith.constant 256 : index
    %host = memref.alloc() : memref<20x48xf32>
    scf.for %r = %c0 to %c20 step %c1 {
      scf.for %c = %c0 to %c48 step %c1 {
        %r100 = arith.muli %r, %c100 : index
        %v = arith.addi %r100, %c : index
        %i = arith.index_cast %v : index to i32
        %f = arith.sitofp %i : i32 to f32
        memref.store %f, %host[%r, %c] : memref<20x48xf32>
      }
    }
    %dev = gpu.alloc () : memref<20x48xf32>
    %out = gpu.alloc () : memref<6x8x32xf32>
    gpu.memcpy %dev, %host : memref<20x48xf32>, memref<20x48xf32>
    %unranked = memref.cast %dev : memref<20x48xf32> to memref<*xf32>
    %tmap = nvgpu.tma.create.descriptor %unranked box[%c8, %c32] : memref<*xf32> -> !map
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c256, %ny = %c1, %nz = %c1) {
      %c2 = arith.constant 2 : index
      %c6 = arith.constant 6 : index
      %bytes = arith.constant 1024 : index
      %buf0 = memref.get_global @stage0 : memref<8x32xf32, 3>
      %buf1 = memref.get_global @stage1 : memref<8x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> !barriers
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !barriers
        nvgpu.mbarrier.init %bar[%c1], %c1 : !barriers
      }
      gpu.barrier
      scf.if %leader {
        scf.for %i = %c0 to %c2 step %c1 {
          %odd = arith.cmpi eq, %i, %c1 : index
          %buf = arith.select %odd, %buf1, %buf0 : memref<8x32xf32, 3>
          %rowtile = arith.divui %i, %c2 : index
          %coltile = arith.remui %i, %c2 : index
          %row = arith.muli %rowtile, %c8 : index
          %col = arith.muli %coltile, %c32 : index
          nvgpu.mbarrier.arrive.expect_tx %bar[%i], %bytes : !barriers
          nvgpu.tma.async.load %tmap[%col, %row], %bar[%i] to %buf : !map, !barriers -> memref<8x32xf32, 3>
        }
      }
      %r = arith.divui %tx, %c32 : index
      %c = arith.remui %tx, %c32 : index
      scf.for %i = %c0 to %c6 step %c1 {
        %stage = arith.remui %i, %c2 : index
        %round = arith.divui %i, %c2 : index
        %parity_index = arith.remui %round, %c2 : index
        %parity = arith.index_cast %parity_index : index to i1
        %odd = arith.cmpi eq, %stage, %c1 : index
        %buf = arith.select %odd, %buf1, %buf0 : memref<8x32xf32, 3>
        %ticks = arith.constant 10000000 : index
        nvgpu.mbarrier.try_wait.parity %bar[%stage], %parity, %ticks : !barriers
        %v = memref.load %buf[%r, %c] : memref<8x32xf32, 3>
        memref.store %v, %out[%i, %r, %c] : memref<6x8x32xf32>
        gpu.barrier
        %next = arith.addi %i, %c2 : index
        %more = arith.cmpi ult, %next, %c6 : index
        %issue = arith.andi %leader, %more : i1
        scf.if %issue {
          %rowtile = arith.divui %next, %c2 : index
          %coltile = arith.remui %next, %c2 : index
          %row = arith.muli %rowtile, %c8 : index
          %col = arith.muli %coltile, %c32 : index
          nvgpu.mbarrier.arrive.expect_tx %bar[%stage], %bytes : !barriers
          nvgpu.tma.async.load %tmap[%col, %row], %bar[%stage] to %buf : !map, !barriers -> memref<8x32xf32, 3>
        }
      }
      gpu.terminator
    }
    %result = memref.alloc() : memref<6x8x32xf32>
    gpu.memcpy %result, %out : memref<6x8x32xf32>, memref<6x8x32xf32>
    %u = memref.cast %result : memref<6x8x32xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
