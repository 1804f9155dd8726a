#include <opus/opus.h>

// opus_encoder_ctl is variadic, which Swift cannot call: one fixed-argument wrapper per request Parlor makes.
static inline int parlor_opus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond));
}
static inline int parlor_opus_set_signal_voice(OpusEncoder *encoder) {
    return opus_encoder_ctl(encoder, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
}
static inline int parlor_opus_get_lookahead(OpusEncoder *encoder, opus_int32 *samples) {
    return opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(samples));
}
