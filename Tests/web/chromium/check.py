# Checks one loopback.html result: the tone is heard while frames are decrypted, not while they pass through still
# encrypted (the decoder makes noise of them) nor under a wrong key (every frame dropped).
import json, sys
with open(sys.argv[1]) as file:
    text = file.read().strip()
result = json.loads(text) if text not in ('', 'TIMEOUT') else {'error': 'no result from the page within 90 s'}
expected_api = {'script': 'script-transform', 'encoded-streams': 'encoded-streams'}[sys.argv[2]]
failures = []
def check(condition, what):
    print(('ok   ' if condition else 'FAIL ') + what)
    if not condition: failures.append(what)
if 'error' in result:
    print('FAIL', result['error'])
    sys.exit(1)
check(result['support'] == expected_api, f"transform API {result['support']}")
check(result['identity'] == {'persistent': True, 'same': True, 'extractable': False},
      f"identity in IndexedDB, loaded again, not extractable: {result['identity']}")
check(result['sdp'] == {'offer': True, 'answer': True}, f"both descriptions keep usedtx=0;cbr=1: {result['sdp']}")
for phase in ('decrypting', 'decryptingAgain'):
    m = result[phase]
    check(m['toneShare'] > 0.8 and m['concealedShare'] < 0.05, f"{phase}: tone heard {m}")
m = result['passThrough']
check(m['toneShare'] < 0.3, f"passThrough (still encrypted): no tone {m}")
m = result['wrongKey']
check(m['concealedShare'] > 0.9 and m['toneShare'] < 0.3, f"wrongKey: frames dropped, no tone {m}")
sizes = {result[phase]['bytes'] for phase in ('decrypting', 'passThrough', 'decryptingAgain', 'wrongKey')}
check(max(sizes) - min(sizes) <= max(sizes) * 0.02, f"constant bitrate: bytes per 2 s {sorted(sizes)}")
sys.exit(1 if failures else 0)
