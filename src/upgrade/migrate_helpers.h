/* migrate_helpers: the C and C++ text `nvshim migrate` inserts once into a file it rewrites
 * (upgrade/migrate.c): static helpers that read cudaDeviceProp's removed fields with
 * cudaDeviceGetAttribute (for the device given, or for the device of the struct's PCI ids), make
 * a cudaMemLocation or CUmemLocation of a CUDA 12 device number, CCCL 2.8's thrust::identity, and
 * bind texture objects in place of texture references. Each is valid C++ on CUDA 12 and 13 (the
 * version-guarded ones only where their types exist). */
#ifndef NVSHIM_MIGRATE_HELPERS_H
#define NVSHIM_MIGRATE_HELPERS_H

extern const char migrate_attr_helper[];     /* nvshim_migrate_attr(attr, device) */
extern const char migrate_loc_helper[];      /* nvshim_migrate_location(device) */
extern const char migrate_culoc_helper[];    /* nvshim_migrate_culocation(device) */
extern const char migrate_prop_helper[];     /* nvshim_migrate_prop_attr(prop, attr) */
extern const char migrate_identity_helper[]; /* nvshim_migrate_identity<T> */
extern const char migrate_tex_helper[];      /* nvshim_migrate_bind_texture, ..._unbind_texture */

#endif
