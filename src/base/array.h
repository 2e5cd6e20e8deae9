/* array.h: librig's growable array is public (rig/rig_array.h): the
 * command and applications use the same one. Every layer sees it
 * (cmake/RigLayers.cmake links it beside the base kit). */
#ifndef RIG_BASE_ARRAY_H
#define RIG_BASE_ARRAY_H

#include "rig/rig_array.h"

#endif
