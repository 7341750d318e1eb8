/* Drives the fake CUDA runtime's memory, stream, event, device and error calls (prototypes as in
 * CUDA 13's cuda_runtime_api.h, written out so no CUDA header is needed). */
#include <stdio.h>
#include <string.h>
typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaMallocManaged(void **, size_t, unsigned);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaHostRegister(void *, size_t, unsigned);
cudaError_t cudaHostUnregister(void *);
cudaError_t cudaMemcpy(void *, const void *, size_t, int);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, int, cudaStream_t);
cudaError_t cudaMemset(void *, int, size_t);
cudaError_t cudaMemsetAsync(void *, int, size_t, cudaStream_t);
cudaError_t cudaMallocAsync(void **, size_t, cudaStream_t);
cudaError_t cudaFreeAsync(void *, cudaStream_t);
cudaError_t cudaStreamCreate(cudaStream_t *);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *, unsigned);
cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned);
cudaError_t cudaEventCreate(cudaEvent_t *);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *, unsigned);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventDestroy(cudaEvent_t);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaGetDeviceCount(int *);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t);
const char *cudaGetErrorName(cudaError_t);

int main(void) {
    float host[4] = {1, 2, 3, 4}, back[4] = {0};
    void *d = 0, *m = 0, *h = 0, *a = 0;
    cudaStream_t s = 0, s2 = 0;
    cudaEvent_t e = 0, e2 = 0;
    int count = 0, dev = -1;
    cudaGetDeviceCount(&count);
    cudaSetDevice(0);
    cudaGetDevice(&dev);
    cudaMalloc(&d, sizeof host);
    cudaMallocManaged(&m, 64, 1);
    cudaMallocHost(&h, 32);
    cudaHostRegister(back, sizeof back, 0);
    cudaStreamCreate(&s);
    cudaStreamCreateWithFlags(&s2, 1);
    cudaEventCreate(&e);
    cudaEventCreateWithFlags(&e2, 2);
    cudaMemcpy(d, host, sizeof host, 1);
    cudaMemsetAsync(m, 7, 64, s);
    cudaMallocAsync(&a, 128, s2);
    cudaMemcpyAsync(a, d, sizeof host, 3, s2);
    cudaEventRecord(e, s2);
    cudaStreamWaitEvent(s, e, 0);
    cudaMemcpyAsync(back, a, sizeof back, 2, s);
    cudaStreamSynchronize(s);
    cudaEventSynchronize(e);
    cudaMemset(d, 0, sizeof host);
    cudaFreeAsync(a, s2);
    printf("roundtrip=%s managed=%d count=%d dev=%d\n", memcmp(host, back, sizeof host) ? "bad" : "ok",
           ((unsigned char *)m)[63], count, dev);
    /* Errors: a host pointer as the device side, an unknown free, a bad device, a bad direction. */
    int bad_copy = cudaMemcpy(host, host + 1, 4, 2);
    int bad_free = cudaFree(host);
    int bad_device = cudaSetDevice(3);
    printf("peek=%d ", cudaPeekAtLastError());
    int last = cudaGetLastError();
    int again = cudaGetLastError();
    printf("last=%d again=%d\n", last, again);
    int bad_kind = cudaMemcpy(d, d, 4, 9);
    printf("errors=%d,%d,%d,%d %s / %s\n", bad_copy, bad_free, bad_device, bad_kind,
           cudaGetErrorName(bad_device), cudaGetErrorString(bad_device));
    cudaEventDestroy(e);
    cudaEventDestroy(e2);
    cudaStreamDestroy(s);
    cudaStreamDestroy(s2);
    cudaHostUnregister(back);
    cudaFreeHost(h);
    cudaFree(m);
    cudaFree(d);
    return cudaDeviceSynchronize();
}
