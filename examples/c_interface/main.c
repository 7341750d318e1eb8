/* Calls the MLIR function @scale (scale.mlir) through its C interface. */
#include <stdint.h>
#include <stdio.h>

/* memref<?xf32> as MLIR lays it out: the C interface passes a pointer to this descriptor. */
struct memref_1d_f32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

void _mlir_ciface_scale(float factor, struct memref_1d_f32 *data);

int main(void) {
  float values[1000];
  for (int i = 0; i < 1000; ++i)
    values[i] = (float)i;
  struct memref_1d_f32 data = {values, values, 0, {1000}, {1}};
  _mlir_ciface_scale(2.0f, &data);
  printf("values[999] = %.1f\n", values[999]);
  return 0;
}
