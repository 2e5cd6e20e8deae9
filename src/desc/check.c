/* placeholder while being written */
#include "desc_internal.h"
rig_status rig_desc_check(const rig_desc *d, rig_error *err) {
  (void)d;
  (void)err;
  return RIG_OK;
}
