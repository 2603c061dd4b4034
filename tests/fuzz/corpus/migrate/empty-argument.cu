void f(){ cudaMemAdvise(p, n, a, );
 cudaMemPrefetchAsync(p, n, , s); }