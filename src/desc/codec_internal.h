/* Private to the codec: the magic strings and the constructor counts that
 * the encoder and decoder share. */
#ifndef RIG_CODEC_INTERNAL_H
#define RIG_CODEC_INTERNAL_H

#define RIG_DESC_MAGIC     "rig.program\n"
#define RIG_DESC_MAGIC_LEN 12

#endif
