/* An ELF shared object read, not loaded: whether bytes are one for an ISA,
 * and the functions its dynamic symbol table exports, for `progrun check`
 * (no code of the image runs, no device is opened). The bytes are a
 * file's: every offset, size and index read from them is checked against
 * their length before it is used. */
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hostcode.h"

/* The ELF machine of an ISA as the host's arch names it (rig_host_isa:
 * uname's), or EM_NONE for one this table lacks (then not compared). */
static unsigned machine_of(const char *isa) {
  static const struct {
    const char *isa;
    unsigned machine;
  } known[] = {{"x86_64", EM_X86_64}, {"aarch64", EM_AARCH64}, {"ppc64le", EM_PPC64},
               {"ppc64", EM_PPC64},   {"riscv64", EM_RISCV},   {"s390x", EM_S390},
               {"i686", EM_386},      {"armv7l", EM_ARM}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(isa, known[i].isa) == 0) return known[i].machine;
  return EM_NONE;
}

static const char *isa_of(unsigned machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv64";
    case EM_386:
      return "i386";
    case EM_ARM:
      return "arm";
    default:
      return NULL;
  }
}

/* Whether [off, off + size) lies within len bytes. */
static bool within(uint64_t off, uint64_t size, size_t len) {
  return off <= len && size <= len - off;
}

rig_status rig_hostcode_image_functions(const char *isa, const void *bytes, size_t len,
                                        void (*each)(void *ctx, const char *name), void *ctx,
                                        rig_error *err) {
  const unsigned char *b = bytes;
  const char *why = rig_hostcode_not_a_shared_object(bytes, len);
  if (why)
    return rig_error_set(err, RIG_EREFUSED, "not an ELF shared object (%zu bytes: %s)", len, why);
  if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
    return rig_error_set(err, RIG_EREFUSED,
                         "an ELF shared object of %s, not of a 64-bit little-endian %s",
                         b[EI_CLASS] != ELFCLASS64 ? "32 bits" : "big-endian bytes", isa);
  Elf64_Ehdr h;
  memcpy(&h, b, sizeof h);
  unsigned want = machine_of(isa);
  if (want != EM_NONE && h.e_machine != want) {
    const char *its = isa_of(h.e_machine);
    if (its)
      return rig_error_set(err, RIG_EREFUSED, "an ELF shared object for %s, not %s", its, isa);
    return rig_error_set(err, RIG_EREFUSED, "an ELF shared object of machine %u, not %s",
                         h.e_machine, isa);
  }
  if (h.e_shentsize != sizeof(Elf64_Shdr) ||
      !within(h.e_shoff, (uint64_t)h.e_shnum * sizeof(Elf64_Shdr), len))
    return rig_error_set(err, RIG_EREFUSED, "an ELF shared object whose section table is cut off");
  /* The dynamic symbols and their strings: what dlsym finds. */
  for (uint16_t i = 0; i < h.e_shnum; i++) {
    Elf64_Shdr sh, strs;
    memcpy(&sh, b + h.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym) || !within(sh.sh_offset, sh.sh_size, len) ||
        sh.sh_link >= h.e_shnum)
      return rig_error_set(err, RIG_EREFUSED, "an ELF shared object whose symbols are cut off");
    memcpy(&strs, b + h.e_shoff + (uint64_t)sh.sh_link * sizeof strs, sizeof strs);
    if (strs.sh_type != SHT_STRTAB || !within(strs.sh_offset, strs.sh_size, len))
      return rig_error_set(err, RIG_EREFUSED, "an ELF shared object whose names are cut off");
    const char *names = (const char *)b + strs.sh_offset;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
      Elf64_Sym s;
      memcpy(&s, b + sh.sh_offset + k * sizeof s, sizeof s);
      unsigned type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
          (bind != STB_GLOBAL && bind != STB_WEAK) ||
          ELF64_ST_VISIBILITY(s.st_other) != STV_DEFAULT || s.st_name >= strs.sh_size ||
          !names[s.st_name] || !memchr(names + s.st_name, '\0', strs.sh_size - s.st_name))
        continue;
      each(ctx, names + s.st_name);
    }
    return RIG_OK;
  }
  return RIG_OK; /* no dynamic symbols: it exports nothing */
}
