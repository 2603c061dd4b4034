/* nvshim compatibility layer: the mark in sccache's preprocessed text, in CC mode.
 *
 * Not meant to be included by hand. nvshim force-includes it only in the -E that sccache runs
 * for its cache key (`COMPILER -x LANG -E ...`) of a source that names an API the layer restores,
 * whatever the `compat` setting (docs/compat.md, "sccache in front"). The line marker below names
 * a file that does not exist: sccache's preprocessor cache mode stores no entry for such a
 * compile, so every build runs the -E, whose text says whether the layer is in (an entry would
 * skip it, and a build with compat = off could be handed an object built with the layer). It
 * declares one external name, nothing else.
 */
#line 1 "<nvshim-compat>/no-preprocessor-cache-entry"
extern int nvshim_compat_sccache_mark;
