texture<float> a;
static texture<int2, 1> b, c;
namespace { texture<float> d; }
__global__ void k(float *o) { *o = tex1Dfetch(a, 0) + tex1Dfetch(b, tex1Dfetch(a, 1)) + a.x; }
void f() { cudaBindTexture(0, a, p, n); cudaBindTexture(off, b); cudaUnbindTexture(a, 2); cudaBindTexture(
