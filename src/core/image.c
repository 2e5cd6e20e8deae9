/* Images: code loaded on a device, kept until released and until the
 * submissions that launch it are gone (each holds a reference). */
#include <stdlib.h>

#include "core_internal.h"

rig_status rig_image_load(rig_device *dev, const void *bytes, size_t len, rig_image **out,
                          rig_error *err) {
  rig_reclaim();
  if (rig_device_lost_now(dev)) return rig_device_lost_error(dev, err);
  if (!dev->drv->image_load)
    return rig_error_set(err, RIG_EREFUSED, "%s: loads no images", dev->facts.name);
  rig_image *img = calloc(1, sizeof *img);
  if (!img) return rig_error_set(err, RIG_ENOMEM, "out of memory for an image");
  rig_status st = dev->drv->image_load(dev->st, bytes, len, &img->handle, err);
  if (st != RIG_OK) {
    free(img);
    return st;
  }
  atomic_init(&img->refs, 1);
  img->dev = dev;
  rig_device_ref(dev);
  *out = img;
  return RIG_OK;
}

rig_status rig_image_entry(rig_image *img, const char *name, size_t len, rig_entry *out,
                           rig_error *err) {
  rig_device *dev = img->dev;
  if (rig_device_lost_now(dev)) return rig_device_lost_error(dev, err);
  return dev->drv->image_entry(dev->st, img->handle, name, len, out, err);
}

rig_device *rig_image_device(const rig_image *img) {
  return img->dev;
}

rig_image *rig_image_retain(rig_image *img) {
  atomic_fetch_add(&img->refs, 1);
  return img;
}

void rig_image_release(rig_image *img) {
  if (!img || atomic_fetch_sub(&img->refs, 1) != 1) return;
  if (img->dev->drv->image_unload) img->dev->drv->image_unload(img->dev->st, img->handle);
  rig_device_unref(img->dev);
  free(img);
}
