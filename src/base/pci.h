/* pci.h: a PCI bus id as text ("0000:3b:00.0", as CUDA writes it, or
 * "3b:00.0", domain 0) read once into its numbers. Private to librig (never
 * installed). */
#ifndef RIG_BASE_PCI_H
#define RIG_BASE_PCI_H

#include <stdbool.h>

typedef struct rig_pci_id {
  unsigned domain, bus, device, function;
} rig_pci_id;

/* [domain:]bus:device.function in hex (domain up to 8 digits, bus and
 * device up to 2, the function one), nothing before or after; false for
 * anything else, and for a device past 0x1f or a function past 7. */
bool rig_pci_parse(const char *text, rig_pci_id *id);

#endif
