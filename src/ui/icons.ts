import { LabIcon } from '@jupyterlab/ui-components';

import vramSvgStr from '../../style/icons/vram.svg';

/**
 * The extension's icon, shown on the sidebar tab, in the settings editor and in
 * the palette.
 */
export const vramIcon = new LabIcon({
  name: 'jupyterlab-vram:memory',
  svgstr: vramSvgStr
});
